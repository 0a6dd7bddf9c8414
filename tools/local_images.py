"""Regenerate the ``images`` table of cloudtrain/catalog/data/local_images.json: the Python packages
each cloud's prebuilt TensorFlow training image ships, per TensorFlow version, with its Python and date.

    python tools/local_images.py --dlc /path/to/aws/deep-learning-containers.git   # rewrite the table
    python tools/local_images.py --dlc ... --check                                # exit 1 when stale

SageMaker: read from the AWS Deep Learning Containers' own build files in a git clone of
aws/deep-learning-containers (``tensorflow/training/docker/<v>/py3/Dockerfile.cpu`` at the last
commit that changed it, or ``docker/tensorflow/<v>/cpu/pyproject.toml`` in the newer layout): every
``pip install`` argument that names a package, its pin as written (a pin whose comma is missing,
``Pillow>=9.0.0<9.1.0``, is read as the range it means), the image's Python (``ARG PYTHON_VERSION``)
and the date of that commit. A version without a Dockerfile of its own takes the nearest older
one's package names without pins, dated by TensorFlow's own release on PyPI. What the table leaves
out, and why, is :data:`LEFT_OUT`; TensorFlow's own dependencies are left to resolve against it
(the Dockerfiles install TensorFlow after them with ``-U``, so TensorFlow's pins win there too).

Vertex AI: Google publishes no package list per image; the prebuilt training containers are Deep
Learning Containers and :data:`VERTEX` is what their pages name, unpinned, dated by the TensorFlow
release the image follows. Unpinned packages resolve as of the image's date (``uv pip install
--exclude-newer``), so TensorFlow <= 2.11 gets the NumPy 1 it was built with.

Only facts are taken from the Dockerfiles (package names, versions, dates); none of their code.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import urllib.request
from datetime import date
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "cloudtrain" / "catalog" / "data" / "local_images.json"

#: Installed by the images but not by a local run, and why (a user who imports one adds it to requirements).
LEFT_OUT = {
    "tensorflow": "the image's own build; PyPI's tensorflow of the same version stands in",
    "tensorflow-cpu": "the image's own build; PyPI's tensorflow of the same version stands in",
    "tensorflow-gpu": "the image's own build; PyPI's tensorflow of the same version stands in",
    "horovod": "built against the image's MPI and compilers",
    "mpi4py": "built against the image's MPI",
    "smdebug": "built from source in the image",
    "cmake": "a build tool of the image",
    "pybind11": "a build tool of the image",
    "pip": "the layer's own pip",
    "setuptools": "the layer's own setuptools",
    "tf-models-official": "brings a second TensorFlow; add it to requirements to import official.*",
    "tensorflow-text": "tied to the image's TensorFlow build; add it to requirements",
    "sagemaker": "the SageMaker Python SDK launches jobs; training code does not import it",
    "sagemaker-experiments": "needs the SageMaker service",
    "sagemaker-studio-analytics-extension": "SageMaker Studio notebook tooling",
    "sagemaker-studio-sparkmagic-lib": "SageMaker Studio notebook tooling",
    "sparkmagic": "SageMaker Studio notebook tooling",
    "jupyterlab": "notebook tooling",
    "smclarify": "SageMaker Clarify, needs the SageMaker service",
    "mlflow": "SageMaker's MLflow integration, needs the service",
    "torch": "PyTorch, beside TensorFlow in the newest images",
    "awscli": "a command-line tool (boto3 is kept)",
    "sagemaker-tensorflow": "PipeModeDataset, built against the image's TensorFlow",
    "sasl": "SageMaker Studio's Hive connection, built against the image's SASL libraries",
    "thrift-sasl": "SageMaker Studio's Hive connection, built against the image's SASL libraries",
    "pyhive": "SageMaker Studio's Hive connection, built against the image's SASL libraries",
    "cython": "a build tool of the image",
    "wheel": "the layer's own wheel",
    "y-py": "notebook tooling",
}

#: TensorFlow's own requirements: a Dockerfile's pin of one is overridden by the TensorFlow it installs last.
TF_OWNS = {
    "absl-py",
    "astunparse",
    "flatbuffers",
    "gast",
    "google-pasta",
    "grpcio",
    "h5py",
    "keras",
    "libclang",
    "ml-dtypes",
    "numpy",
    "opt-einsum",
    "packaging",
    "protobuf",
    "requests",
    "six",
    "tensorboard",
    "termcolor",
    "typing-extensions",
    "urllib3",
    "werkzeug",
    "wrapt",
}

VERTEX = {
    "source": "Vertex AI 'Prebuilt containers for custom training' (cloud.google.com/vertex-ai/docs/training/"
    "pre-built-containers): the tf-cpu/tf-gpu.2-x images are Deep Learning Containers, with cloudml-hypertune "
    "for hyperparameter tuning and the data science stack of Deep Learning Containers; no versions are given, "
    "so they resolve as of the TensorFlow release each image follows",
    "packages": [
        "cloudml-hypertune",
        "pandas",
        "scikit-learn",
        "scipy",
        "pillow",
        "pyyaml",
        "google-cloud-storage",
        "tensorflow-datasets",
        "tensorflow-hub",
    ],
}

#: A prebuilt training image's URI → its cloud, TensorFlow and Python: the URI forms of Vertex AI's training
#: images (and the Deep Learning Containers they are) and of SageMaker's tensorflow-training repository.
PREBUILT_URIS = {
    "vertex": r"/(?:training|deeplearning-platform-release)/tf2?-(?:cpu|gpu)\.(?P<major>\d+)-(?P<minor>\d+)"
    r"(?:\.py(?P<py>\d+))?(?:[:@]|$)",
    "sagemaker": r"\.dkr\.ecr\.[^/]+/tensorflow-training:(?P<major>\d+)\.(?P<minor>\d+)[.\d]*-(?:cpu|gpu)"
    r"(?:-py(?P<py>\d+))?",
}

#: The versions to cover: every key of the table's tensorflow_pythons (the catalog's TensorFlow versions).
_SKIP_TOKENS = re.compile(r"^(-|\$|\.|/|https?:|git\+|&&|;|\||\\)")


def git(dlc: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(dlc), *args], capture_output=True, text=True, check=True).stdout


def dockerfile(dlc: Path, version: str) -> tuple[str, str, str] | None:
    """(text, commit, date) of the newest Dockerfile.cpu of ``version`` in any commit of the clone."""
    path = f"tensorflow/training/docker/{version}/py3/Dockerfile.cpu"
    log = git(dlc, "log", "--all", "-1", "--diff-filter=AM", "--format=%H %cs", "--", path).split()
    if not log:
        return None
    commit, when = log
    return git(dlc, "show", f"{commit}:{path}"), commit, when


def pyproject(dlc: Path, version: str) -> tuple[str, str, str] | None:
    path = f"docker/tensorflow/{version}/cpu/pyproject.toml"
    log = git(dlc, "log", "--all", "-1", "--diff-filter=AM", "--format=%H %cs", "--", path).split()
    if not log:
        return None
    commit, when = log
    return git(dlc, "show", f"{commit}:{path}"), commit, when


def pip_arguments(text: str) -> list[str]:
    """Every argument of every ``pip install`` in a Dockerfile, comments dropped."""
    lines = [line.split(" #")[0] for line in text.splitlines() if not line.strip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    found: list[str] = []
    for command in re.split(r"&&|;|\n", joined):
        match = re.search(r"(?:pip3?|\$\{?PIP\}?|-m pip)\s+(?:--no-cache-dir\s+)?install\b(.*)", command)
        if not match:
            continue
        try:
            tokens = shlex.split(match.group(1))
        except ValueError:
            continue
        found += [t for t in tokens if not _SKIP_TOKENS.match(t) and not t.endswith(".whl")]
    return found


def requirement(token: str) -> Requirement | None:
    """``token`` as a requirement; ``Pillow>=9.0.0<9.1.0`` (a comma missing) as the range it means."""
    for text in (token, re.sub(r"(\d)([<>!=])", r"\1,\2", token)):
        try:
            return Requirement(text)
        except InvalidRequirement:
            continue
    return None


def packages(tokens: list[str]) -> list[str]:
    """The requirements kept, each package once (the last pin wins, as a later ``pip install -U`` does)."""
    kept: dict[str, str] = {}
    for token in tokens:
        req = requirement(token)
        if req is None:
            continue
        name = canonicalize_name(req.name)
        if name in LEFT_OUT or req.url:
            continue
        kept[name] = name if name in TF_OWNS else f"{name}{req.specifier}"
    return sorted(kept.values())


def python_of(text: str) -> str | None:
    match = re.search(r"ARG PYTHON_VERSION=(\d+\.\d+)", text) or re.search(r'requires-python = ">=(\d+\.\d+)', text)
    return match.group(1) if match else None


def tensorflow_release_dates() -> tuple[dict[str, str], dict[str, str]]:
    """Major.minor → the dates of its first and of its newest final release on PyPI (one request to PyPI's JSON
    API)."""
    with urllib.request.urlopen("https://pypi.org/pypi/tensorflow/json", timeout=30) as response:
        releases = json.load(response)["releases"]
    first: dict[str, str] = {}
    newest: dict[str, str] = {}
    for version, files in releases.items():
        if not re.fullmatch(r"\d+\.\d+\.\d+", version) or not files:
            continue
        minor = ".".join(version.split(".")[:2])
        uploaded = min(f["upload_time"][:10] for f in files)
        first[minor] = min(first.get(minor, uploaded), uploaded)
        newest[minor] = max(newest.get(minor, uploaded), uploaded)
    return first, newest


def sagemaker_images(dlc: Path, versions: list[str], released: dict[str, str], first: dict[str, str]) -> dict[str, Any]:
    """A Dockerfile committed before its TensorFlow's first final release (2.7's, for 2.7.0rc1) is dated by that
    release: the image was built from it then, and ``tensorflow==2.7.*`` resolves from that day on."""
    table: dict[str, Any] = {}
    previous: dict[str, Any] | None = None
    for version in versions:
        found = dockerfile(dlc, version)
        if found:
            text, commit, when = found
            names = packages(pip_arguments(text))
            where = f"tensorflow/training/docker/{version}/py3/Dockerfile.cpu@{commit[:10]}"
        elif (found := pyproject(dlc, version)) is not None:
            text, commit, when = found
            deps = re.findall(r'^\s*"([^"]+)",', text, flags=re.M)
            names = packages(deps)
            where = f"docker/tensorflow/{version}/cpu/pyproject.toml@{commit[:10]}"
        elif previous is not None:
            names = sorted({re.split(r"[<>=!~;\[ ]", p)[0] for p in previous["packages"]})
            table[version] = {
                "python": previous["python"],
                "date": released.get(version, previous["date"]),
                "packages": names,
                "source": f"no Dockerfile of its own: {previous['source']}'s packages, unpinned",
            }
            continue
        else:
            continue
        entry = {"python": python_of(text), "date": max(when, first.get(version, when)), "packages": names}
        entry["source"] = where
        table[version] = previous = entry
    return table


def vertex_images(versions: list[str], released: dict[str, str]) -> dict[str, Any]:
    return {v: {"date": released[v], "packages": list(VERTEX["packages"])} for v in versions if v in released}


def render(dlc: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    versions = sorted(
        (v for v in data["tensorflow_pythons"] if v[0].isdigit()), key=lambda v: tuple(map(int, v.split(".")))
    )
    first, released = tensorflow_release_dates()
    head = git(dlc, "log", "-1", "--format=%H %cs").split()
    data["prebuilt_uris"] = PREBUILT_URIS
    data["images"] = {
        "about": "What each cloud's prebuilt TensorFlow training image ships besides TensorFlow, per version: its "
        "Python, the date unpinned packages resolve at (uv --exclude-newer), the packages; released: the day of "
        "each TensorFlow's newest patch release on PyPI, which the slim layer resolves at (local.layer: slim, a "
        "Slurm cluster). Generated by tools/local_images.py; do not edit by hand.",
        "read": date.today().isoformat(),
        "released": {v: released[v] for v in versions if v in released},
        "left_out": LEFT_OUT,
        "sagemaker": {
            "source": f"aws/deep-learning-containers at {head[0][:10]} ({head[1]}): each version's Dockerfile.cpu",
            "versions": sagemaker_images(dlc, versions, released, first),
        },
        "vertex": {"source": VERTEX["source"], "versions": vertex_images(versions, released)},
    }
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dlc", type=Path, required=True, help="a git clone of aws/deep-learning-containers")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    fresh = json.dumps(render(args.dlc), indent=2) + "\n"
    if args.check:
        new, old = json.loads(fresh)["images"], json.loads(DATA.read_text()).get("images", {})
        stale = {**new, "read": None} != {**old, "read": None}
        print("stale" if stale else "fresh")
        return 1 if stale else 0
    DATA.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
