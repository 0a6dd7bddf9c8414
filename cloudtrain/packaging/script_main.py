"""cloudtrain's script launcher: ``python -m cloudtrain_script ARGS`` runs the user's script on Vertex AI.

The ``__main__.py`` of the package built around a ``package.script`` folder (:mod:`cloudtrain.packaging.script`). As the
SageMaker training toolkit does, it copies the folder (``src/`` beside it) to ``./code``, sets the ``SM_*`` variables
Vertex does not (``SM_HOSTS`` / ``SM_CURRENT_HOST`` from ``CLUSTER_SPEC``, ``SM_MODEL_DIR`` / ``SM_OUTPUT_DATA_DIR``
from ``AIP_MODEL_DIR`` as its ``/gcs/`` path; variables already set are kept), and ``exec``s ``python SCRIPT ARGS``
(``python -m MODULE`` when the folder has a ``setup.py``), so the script's exit status is the job's.

Standard library only, Python 3.8+: it runs inside whatever image the job uses."""

from __future__ import annotations  # annotations stay text: 3.8 reads ``list[str]`` without evaluating it

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
INFO = "script.json"  # {"script": "train.py"}, written next to this file
SOURCES = "src"
CODE_DIR = "code"


def script_command(script: str, has_setup_py: bool, args: Sequence[str], python: str = sys.executable) -> list[str]:
    """The toolkit's command for ``sagemaker_program``: a module when the folder has a ``setup.py``, else the file."""
    if has_setup_py:
        return [python, "-m", re.sub(r"\.py$", "", script)] + list(args)
    return [python, script] + list(args)


def fuse_path(uri: str) -> str:
    """``gs://bucket/path`` → ``/gcs/bucket/path`` (Cloud Storage FUSE); other paths unchanged."""
    return "/gcs/" + uri[len("gs://") :] if uri.startswith("gs://") else uri


def cluster_hosts(environ: Mapping[str, str]) -> tuple[list[str], str]:
    """(hosts, current host) from Vertex's ``CLUSTER_SPEC``; one host when it is absent."""
    spec = json.loads(environ.get("CLUSTER_SPEC") or "{}")
    cluster = spec.get("cluster") or {}
    hosts = [f"{pool}-{i}" for pool in sorted(cluster) for i in range(len(cluster[pool]))]
    task = spec.get("task") or {}
    current = f"{task.get('type', 'workerpool0')}-{int(task.get('index', 0))}"
    return (hosts or [current]), current


def sagemaker_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The ``SM_*`` variables Vertex lacks, derived from what it sets; those already set are left out."""
    hosts, current = cluster_hosts(environ)
    derived = {"SM_HOSTS": json.dumps(hosts), "SM_CURRENT_HOST": current}
    model = environ.get("AIP_MODEL_DIR")
    if model:
        base = model.rstrip("/").rsplit("/", 1)[0]
        derived["SM_MODEL_DIR"] = fuse_path(model.rstrip("/"))
        derived["SM_OUTPUT_DATA_DIR"] = fuse_path(base + "/output/data")
    return {k: v for k, v in derived.items() if k not in environ}


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with open(os.path.join(HERE, INFO)) as f:
        script = json.load(f)["script"]
    code = os.path.abspath(CODE_DIR)
    shutil.copytree(os.path.join(HERE, SOURCES), code, dirs_exist_ok=True)
    env = dict(os.environ)
    env.update(sagemaker_env(env))
    for key in ("SM_MODEL_DIR", "SM_OUTPUT_DATA_DIR"):
        if env.get(key):
            try:
                os.makedirs(env[key], exist_ok=True)
            except OSError as exc:
                print(f"cloudtrain: cannot create {key}={env[key]}: {exc}", file=sys.stderr, flush=True)
    command = script_command(script, os.path.isfile(os.path.join(code, "setup.py")), args)
    shown = " ".join(shlex.quote(c) for c in command)
    print(f"cloudtrain: cd {shlex.quote(code)} && {shown}", flush=True)
    sys.stderr.flush()
    os.chdir(code)
    os.execve(command[0], command, env)


if __name__ == "__main__":
    sys.exit(main())
