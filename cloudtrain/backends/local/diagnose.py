"""One line for a failed replica whose last lines show what real code meets on the clouds' images (NumPy 2 under
an old TensorFlow, Keras 2 code under Keras 3, a pin that replaced the image's TensorFlow, an undeclared import):
data (``catalog/data/failure_hints.json``), matched for the TensorFlow that really ran."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from cloudtrain import catalog
from cloudtrain.catalog._data import load
from cloudtrain.catalog.suggest import version_key as key

TRACEBACK = "Traceback (most recent call last)"
PROBE = """import importlib.metadata as m
for n, d in (('numpy', 'numpy'), ('tensorflow', 'tensorflow'), ('tensorflow', 'tensorflow-cpu')):
    try: print(n, m.version(d))
    except m.PackageNotFoundError: pass"""


def failure_hint(
    log: str,
    image: str | None,
    cloud: str,
    ran: dict[str, str] | None = None,
    exit_code: int | None = None,
    **facts: bool,
) -> str | None:
    """The hint for a replica's ``log``, or None. ``image``: the image's TensorFlow (None for an explicit
    image); ``ran``: what the environment really has (``installed``), when a pin replaced the image's;
    ``exit_code`` and ``facts`` (``passed_model_dir``): what a rule's ``exit`` and ``requires`` ask."""
    text, data, ran = log[-20_000:], load("failure_hints"), ran or {}
    tf, last = ran.get("tensorflow") or image, text[text.rfind(TRACEBACK) :] if TRACEBACK in text else ""
    values: dict[str, Any] = {"tensorflow": tf or "2.16 or later", "image": image, "cloud": cloud, **data["from"]}
    for rule in data["rules"]:
        since, before = (data["from"].get(rule.get(k), "") for k in ("since", "before"))
        if (before and (tf is None or key(tf) >= key(before))) or (since and tf and key(tf) < key(since)):
            continue  # (an explicit image, tf None: Keras 3's own words still tell)
        if rule.get("exit", exit_code) != exit_code or not all(facts.get(f) for f in rule.get("requires", ())):
            continue
        scope = {"anywhere": last and text, "last": last, "tail": text[-4_000:]}[rule["scope"]]
        for sign in (s if isinstance(s, dict) else {"pattern": s} for s in rule["patterns"]):
            if found := re.search(sign["pattern"], scope):
                values.update({k: v for k, v in found.groupdict().items() if v})
                values["numpy"] = ran.get("numpy") or values.get("numpy_seen") or "2"
                return _line(rule, values, sign.get("what"), cloud)
    return None


def _line(rule: dict[str, Any], values: dict[str, Any], what: str | None, cloud: str) -> str:
    values["what"], line = what and what.format(**values), rule["line"]
    if "fix" in rule:
        older = [v for v in catalog.tensorflow_versions(cloud) if key(v) < key(values["keras3"])]
        values["keras2"] = older[-1] if older else None
        pinned = values["image"] and key(values["image"]) < key(values["keras3"])
        pick = "fix_pinned" if pinned else "fix" if values["image"] else "fix_unknown"  # image None: image.uri given
        values["fix"] = (rule[pick] if older else "port the code").format(**values)
    known = rule.get("modules", {}).get(values.get("module"), {})
    values["pip"] = known.get("pip", values.get("module"))
    if cloud in known:
        line, values["source"] = rule["line_in_image"], known[cloud]
    return str(line.format(**values))


def installed(python: Path) -> dict[str, str]:
    """numpy and tensorflow as the environment of ``python`` has them (its layers too), {} if it cannot tell."""
    try:
        out = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(line.partition(" ")[::2] for line in reversed(out.splitlines()))
