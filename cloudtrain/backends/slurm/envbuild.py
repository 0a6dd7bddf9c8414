"""Build the job's environment on a cluster's login node, where cloudtrain itself is not installed.

Runs there as ``python3 envbuild.py SPEC_JSON``, standard library only (Python >= 3.10), with the same layers,
folder names and markers as the ``--local`` builder (:mod:`cloudtrain.backends.runner.venv`), so one workdir's
environments serve both: ``envs/image-<key>/`` from the package index (the login node has internet; compute nodes
need none) and ``envs/pkg-<key>/`` with the sdist, installed with the image layer's pip, offline first. Each layer
is built in ``.tmp-<name>-<pid>`` and renamed into place."""

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

MARKER = "cloudtrain-env.json"
IMAGE_PTH = "_cloudtrain_image.pth"
PIP = ["--disable-pip-version-check", "--no-input", "--no-warn-script-location", "--progress-bar", "off"]


def complete(folder: str, key: str) -> bool:
    try:
        with open(os.path.join(folder, MARKER)) as f:
            return json.load(f)["key"] == key and os.path.exists(os.path.join(folder, "bin", "python"))
    except (OSError, ValueError, KeyError):
        return False


def run(argv: list[str]) -> str:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        lines = (result.stderr + result.stdout).strip().splitlines() or ["no output"]
        raise SystemExit(f"cloudtrain envbuild: {' '.join(argv[:4])} …: {lines[-1]}")
    return result.stdout


def build(final: str, key: str, steps: Callable[[str], None], marker: dict[str, Any]) -> bool:
    if complete(final, key):
        return False
    os.makedirs(os.path.dirname(final), exist_ok=True)
    tmp = os.path.join(os.path.dirname(final), f".tmp-{os.path.basename(final)}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        steps(tmp)
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(os.path.join(tmp, MARKER), "w") as f:
            json.dump({**marker, "key": key, "created": now, "last_used": now}, f, indent=2)
        shutil.rmtree(final, ignore_errors=True)
        os.rename(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return True


def site_dirs(env: str) -> list[str]:
    code = "import sysconfig; p = sysconfig.get_paths(); print(p['purelib']); print(p['platlib'])"
    return list(dict.fromkeys(run([os.path.join(env, "bin", "python"), "-I", "-c", code]).splitlines()))


def main(argv: list[str]) -> None:
    spec = json.loads(argv[1])
    python = spec["python"]

    def image(tmp: str) -> None:
        run([python, "-m", "venv", tmp])
        pip = [os.path.join(tmp, "bin", "python"), "-m", "pip", "install", *PIP]
        as_of = spec.get("image_as_of") or []  # [pip>=26.0, --uploaded-prior-to, DAY]: the image's day, as --local
        if as_of:
            run([*pip, "--upgrade", as_of[0]])
        if spec["image_packages"]:
            run([*pip, *as_of[1:], *spec["image_packages"]])

    def package(tmp: str) -> None:
        run([python, "-m", "venv", "--without-pip", tmp])
        lines = [f"import site; site.addsitedir({os.path.realpath(p)!r})" for p in site_dirs(spec["image_dir"])]
        with open(os.path.join(site_dirs(tmp)[0], IMAGE_PTH), "w") as f:
            f.write("\n".join(lines) + "\n")
        install = [os.path.join(tmp, "bin", "python"), "-m", "pip", "install", *PIP, "--no-build-isolation"]
        offline = subprocess.run([*install, "--no-index", spec["sdist"]], capture_output=True, text=True)
        if offline.returncode != 0:
            run([*install, spec["sdist"]])

    built = build(
        spec["image_dir"],
        spec["image_key"],
        image,
        {"kind": "image", "python": python, "packages": spec["image_packages"]},
    )
    built_pkg = build(
        spec["pkg_dir"],
        spec["pkg_key"],
        package,
        {
            "kind": "package",
            "image": os.path.basename(spec["image_dir"]),
            "installs": [spec["sdist"]],
            "python": python,
        },
    )
    print(json.dumps({"image_built": built, "package_built": built_pkg}))


if __name__ == "__main__":
    main(sys.argv)
