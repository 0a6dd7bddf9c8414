"""Move a config to the other cloud: what that cloud lacks is mapped to its nearest, in one line each.
:func:`fit_to_cloud` is the one place this happens (after ``--set``, and for a fallback entry that switches backend);
the other cloud's buckets are refused with the fix named: data is never copied between clouds behind the user's back."""

from __future__ import annotations

import copy
from typing import Any

from cloudtrain import catalog
from cloudtrain.backend_rules import rules
from cloudtrain.catalog import crosscloud
from cloudtrain.catalog.records import CatalogError, MachineInfo
from cloudtrain.catalog.table import table
from cloudtrain.data.schemes import native_scheme
from cloudtrain.text import mapped_line
from cloudtrain.text.numbers import money


class Refused(Exception):
    """A setting that cannot move to the other cloud: ``path`` in the config, the message, the fix."""

    def __init__(self, path: tuple[str, ...], message: str, hint: str):
        super().__init__(message)
        self.path, self.message, self.hint = path, message, hint


def other(cloud: str) -> str:
    """The cloud a config for ``cloud`` may have been written for (the two clouds with catalogs map both ways)."""
    return next(c for c in catalog.clouds() if c != cloud)


def fit_to_cloud(
    data: dict[str, Any], cloud: str, *, translate: bool = True, schemes: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[str]]:
    """``data`` (a config dict, before validation) made to run on ``cloud``, and one ``mapped:`` line per mapping.

    Settings that already belong to ``cloud`` are left alone (a native config comes back unchanged, no lines). Raises
    :class:`Refused` for what cannot be mapped. ``translate`` False leaves the machine alone (the loader refuses it with
    :func:`foreign_machine`). ``schemes``: bucket schemes the backend's jobs write to besides the cloud's own (a
    Kubernetes pod writes ``s3://`` on EKS): buckets of those are not the other cloud's."""
    if cloud not in catalog.clouds():
        return data, []
    out = copy.deepcopy(data)
    notes: list[str] = []
    source = other(cloud)
    if translate:
        _machine(out, cloud, source, notes)
    _region(out, cloud, source, notes)
    _image(out, cloud, source, notes, translate)
    _buckets(out, cloud, source, schemes)
    return out, notes


def _machine(out: dict[str, Any], cloud: str, source: str, notes: list[str]) -> None:
    foreign = _foreign(out, cloud, source)
    if foreign is None:
        return
    (info, pick, found), machine = foreign, out["machine"]
    gpu = info.gpu.name if info.gpu else None
    why = []
    if gpu and found.gpu and found.gpu.name != gpu:
        why.append(f"{rules(cloud).words.title} has no {gpu}; {found.gpu.name} is the cheapest GPU at least as fast")
    if gpu and found.accelerator_count != info.accelerator_count:
        why.append(f"{found.accelerator_count} is the nearest GPU count it offers")
    if not why:
        why.append(
            f"{rules(cloud).words.title}'s cheapest machine with these "
            + ("GPUs" if gpu else "CPUs")
            + " and at least the vCPUs and memory"
        )
    notes.append(
        mapped_line(
            "machine",
            f"{crosscloud.describe(info)} ({rules(source).words.title})",
            crosscloud.describe(found),
            "; ".join(why),
            (info.price_per_hour, found.price_per_hour),
        )
    )
    new: dict[str, Any] = dict(pick)
    new.update({k: v for k, v in machine.items() if k not in ("type", "accelerator", "accelerator_count")})
    out["machine"] = new


def _foreign(out: dict[str, Any], cloud: str, source: str) -> tuple[MachineInfo, dict[str, Any], MachineInfo] | None:
    """The machine of ``out`` when it is one of ``source``'s (and not ``cloud``'s), resolved there, with the
    nearest of ``cloud``'s (its ``machine:`` keys, and resolved); else None."""
    machine = out.get("machine")
    kind = machine.get("type") if isinstance(machine, dict) else None
    if not isinstance(kind, str) or kind in table(cloud).types or kind not in table(source).types:
        return None
    info = _resolved(out, source)  # None when invalid on its own cloud too: validation names the problem
    hardware = None if info is None else rules(source).describe(out["machine"])
    if info is None or hardware is None:
        return None
    pick = rules(cloud).nearest(hardware)[0]
    return (
        info,
        pick,
        catalog.resolve_machine(cloud, pick["type"], pick.get("accelerator"), pick.get("accelerator_count")),
    )


def foreign_machine(data: dict[str, Any], cloud: str) -> Refused | None:
    """The refusal of a machine type of the other cloud in a config for ``cloud``, naming the nearest of
    ``cloud``'s and the ``--set backend=…`` that runs it where it belongs; None when the type is not one
    (or ``cloud`` has no catalog: a backend with machines of its own)."""
    if cloud not in catalog.clouds():
        return None
    source = other(cloud)
    foreign = _foreign(data, cloud, source)
    if foreign is None:
        return None
    info, _, found = foreign
    theirs, ours = rules(source).words, rules(cloud).words
    price = f" ({money(found.price_per_hour)}/h)" if found.price_per_hour is not None else ""
    return Refused(
        ("machine", "type"),
        f"{info.machine_type} is a {theirs.title} {theirs.machine_word} and this config runs on {ours.title}",
        f"nearest on {ours.title}: {crosscloud.describe(found)}{price}; or run it "
        f"on {theirs.title}: --set backend={source} (with {theirs.submit_needs})",
    )


def _region(out: dict[str, Any], cloud: str, source: str, notes: list[str]) -> None:
    region = out.get("region")
    if not isinstance(region, str) or region in catalog.regions(cloud) or region not in catalog.regions(source):
        return
    nearest = crosscloud.nearest_region(cloud, region)
    if not nearest:
        return
    why = f"the nearest {rules(cloud).words.title} region"
    machine = _resolved(out, cloud)
    offering = catalog.nearest_offering(machine, nearest) if machine is not None else nearest
    if offering and offering != nearest and machine is not None:  # the nearest lacks the (mapped) machine's GPUs
        why += f" with {crosscloud.describe(machine)}; {nearest} has none"
        nearest = offering
    out["region"] = nearest
    notes.append(mapped_line("region", region, nearest, why))


def _resolved(out: dict[str, Any], cloud: str) -> MachineInfo | None:
    """The machine of ``out`` on ``cloud`` (after the machine's mapping), or None when it does not resolve."""
    machine = out.get("machine")
    if not isinstance(machine, dict) or not isinstance(machine.get("type"), str):
        return None
    try:
        return catalog.resolve_machine(
            cloud, machine["type"], machine.get("accelerator"), machine.get("accelerator_count")
        )
    except catalog.CatalogError:
        return None  # validation names the problem


def _image(out: dict[str, Any], cloud: str, source: str, notes: list[str], translate: bool = True) -> None:
    image = out.get("image")
    if not isinstance(image, dict):
        return
    uri = image.get("uri")
    theirs = rules(source) if isinstance(uri, str) else None  # imported only for an image.uri
    if isinstance(uri, str) and theirs and theirs.facts.image_registry and theirs.facts.image_registry.search(uri):
        match = theirs.facts.tf_image.search(uri) if theirs.facts.tf_image else None
        if not match:
            raise Refused(
                ("image", "uri"),
                f"{uri} is in {theirs.words.title}'s registry, which {rules(cloud).words.title} does not pull from",
                f"push it to the {rules(cloud).words.title} registry, or remove image.uri and set image.tensorflow",
            )
        image = {k: v for k, v in image.items() if k != "uri"}
        image["tensorflow"] = f"{match[1]}.{match[2]}"
        out["image"] = image
        notes.append(
            mapped_line(
                "image.uri",
                uri,
                f"{rules(cloud).words.title}'s TensorFlow {image['tensorflow']} image",
                f"it is {rules(source).words.title}'s TensorFlow {image['tensorflow']} image",
            )
        )
    version = image.get("tensorflow")
    if not isinstance(version, (str, type(None))) or image.get("uri"):
        return
    wanted = ".".join((version or "").strip().split(".")[:2])
    if version is not None and wanted not in (here := catalog.tensorflow_versions(cloud)) and _theirs(wanted, source):
        chosen, why = crosscloud.mapped_tensorflow(wanted, here, rules(cloud).words.title)
        if why:
            image = out["image"] = {**image, "tensorflow": chosen}
            notes.append(mapped_line("image.tensorflow", wanted, chosen, why))
    if translate:  # a file moved to this cloud: its image's Python, as its TensorFlow; a native one's is checked
        _python(out, image, cloud, notes)


def _theirs(wanted: str, source: str) -> bool:
    """Whether ``wanted`` is a TensorFlow the other cloud ships (or TF 1). Asked only for a version this cloud lacks, so
    a native config never reads the other cloud's SDK table (it may not be installed)."""
    try:
        return wanted.startswith("1.") or wanted in catalog.tensorflow_versions(source)
    except CatalogError:
        return False


def _python(out: dict[str, Any], image: dict[str, Any], cloud: str, notes: list[str]) -> None:
    """``image.python`` the cloud's image of that TensorFlow lacks: the image's own, with a line (an estimator's
    ``py39`` on Vertex AI's Python 3.10 image), as the TensorFlow version is."""
    version = image.get("tensorflow") or catalog.default_tensorflow(cloud)
    if isinstance(image.get("python"), str) and isinstance(version, str):
        kept, note = python_on(cloud, version, image["python"])
        if note:
            out["image"] = {k: v for k, v in image.items() if k != "python"}
            notes.append(note)


def python_on(cloud: str, tensorflow: str, python: str) -> tuple[str | None, str | None]:
    """``python`` if the cloud's ``tensorflow`` image has it (Python 3 as a whole fits any), else None and the
    ``mapped:`` line to the image's own Python (None when the cloud has no such image)."""
    have = catalog.image_pythons(cloud, tensorflow)
    if crosscloud.python_version(python) in (*have, None):
        return python, None
    title = rules(cloud).words.title
    why = f"the {title} TensorFlow {tensorflow} image has Python {', '.join(have)} only"
    return None, mapped_line("image.python", python, have[-1], why) if have else None


def _buckets(out: dict[str, Any], cloud: str, source: str, schemes: tuple[str, ...] = ()) -> None:
    for key in ("staging_bucket", "output_dir", "job_dir"):
        value = out.get(key)  # a backend is imported only for a bucket's location
        if not isinstance(value, str) or "://" not in value or value.split("://")[0] in schemes:
            continue
        if not value.startswith(f"{native_scheme(cloud)}://") and value.startswith(f"{native_scheme(source)}://"):
            raise Refused(
                (key,),
                f"{value} is a {rules(source).words.title} bucket; {rules(cloud).words.title} cannot use it",
                f"set {key}: {native_scheme(cloud)}://… (--set {key}={native_scheme(cloud)}://my-bucket)",
            )
