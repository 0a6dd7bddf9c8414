"""Every builder of an image layer resolves as of the image's day: uv's --exclude-newer (--local), pip's
--uploaded-prior-to (the pip fallback, a Slurm login node), so TensorFlow <= 2.11 gets the NumPy 1 it was built on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cloudtrain.backends.runner import venv
from cloudtrain.backends.runner.image import PIP_AS_OF, Interpreter, resolve_image
from cloudtrain.backends.slurm import envbuild


def _find(version, setting=None):
    return Interpreter(sys.executable, version) if version in ("3.10", "3.12") and not setting else None


OLD = resolve_image("vertex", "2.11", find=_find)  # the image of 2023-03-20
NEW = resolve_image("sagemaker", "2.21", find=_find, slim=True)  # today's resolution (Python 3.12)


def test_the_images_day_is_each_installers_cutoff():
    assert OLD.date == "2023-03-20" and NEW.date is None
    assert OLD.as_of() == ("--exclude-newer", "2023-03-20T23:59:59Z")
    assert OLD.as_of(pip=True) == ("--uploaded-prior-to", "2023-03-20T23:59:59Z")
    assert NEW.as_of() == NEW.as_of(pip=True) == ()
    py36 = resolve_image("sagemaker", "2.1", find=lambda v, s=None: Interpreter("/p", v) if v == "3.6" else None)
    assert py36.date and py36.as_of() and py36.as_of(pip=True) == ()  # no pip >= 26 runs on Python 3.6


def test_the_pip_fallback_installs_a_pip_that_knows_the_cutoff_then_resolves_with_it(tmp_path):
    ran: list[list[str]] = []

    def run(argv, **_):
        ran.append([str(a) for a in argv])
        return subprocess.CompletedProcess(argv, 0, "", "")

    venv._install_image_packages(tmp_path, OLD, run, None)
    python = str(venv.env_python(tmp_path))
    quiet = venv._PIP_QUIET
    assert ran == [
        [python, "-m", "pip", "install", *quiet, "--upgrade", PIP_AS_OF],
        [python, "-m", "pip", "install", *quiet, "--uploaded-prior-to", "2023-03-20T23:59:59Z", *OLD.packages],
    ]


def test_a_slurm_login_node_builds_with_the_same_cutoff(tmp_path, monkeypatch):
    ran: list[list[str]] = []
    monkeypatch.setattr(envbuild, "run", lambda argv: ran.append(argv) or "")
    monkeypatch.setattr(envbuild, "build", lambda final, key, steps, marker: steps(str(tmp_path / "env")) or True)
    monkeypatch.setattr(envbuild.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0))
    monkeypatch.setattr(envbuild, "site_dirs", lambda env: [str(tmp_path / "site")])
    (tmp_path / "site").mkdir()
    for image, cutoff in ((OLD, ["--uploaded-prior-to", "2023-03-20T23:59:59Z"]), (NEW, [])):
        ran.clear()
        request = {"python": "python3", "image_dir": "i", "image_key": "k", "image_packages": list(image.packages)}
        request |= {"image_as_of": [PIP_AS_OF, *image.as_of(pip=True)] if image.as_of(pip=True) else []}
        envbuild.main(["envbuild.py", json.dumps({**request, "pkg_dir": "p", "pkg_key": "q", "sdist": "s"})])
        pip = [str(tmp_path / "env" / "bin" / "python"), "-m", "pip", "install", *envbuild.PIP]
        installs = [argv for argv in ran if argv[:4] == pip[:4]]
        assert installs[-1] == [*pip, *cutoff, *image.packages]
        assert ([*pip, "--upgrade", PIP_AS_OF] in installs) == bool(cutoff)


@pytest.mark.slow
def test_resolved_as_of_the_images_day_tensorflow_2_11_gets_numpy_1_and_today_numpy_2():
    """What the cutoff resolves to, from uv's warm cache (no network): the values the images had."""
    uv = venv.find_uv()
    if uv is None:
        pytest.skip("no uv here")

    def numpy(image) -> str:
        cmd = [
            uv,
            "pip",
            "compile",
            "--offline",
            "--quiet",
            "--python-version",
            image.python.version,
            *image.as_of(),
            "-",
        ]
        out = subprocess.run(cmd, input="\n".join(image.packages), capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-1500:]
        return next(line.split("==")[1] for line in out.stdout.splitlines() if line.startswith("numpy=="))

    assert numpy(OLD) == "1.24.2"  # NumPy 2.0.0 came out 2024-06-16; TF 2.11 sets no upper bound
    assert int(numpy(NEW).split(".")[0]) >= 2


def test_pip_takes_the_cutoff_as_written():
    """The flag and its value as pip >= 26 parses them (this venv's pip; no index is read)."""
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", *OLD.as_of(pip=True), "pip"]
    out = subprocess.run(pip, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "already satisfied" in out.stdout, out.stderr[-800:]
