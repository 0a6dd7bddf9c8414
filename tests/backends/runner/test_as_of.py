"""Every builder of an image layer resolves as of the image's day: uv's --exclude-newer (--local), pip's
--uploaded-prior-to (the pip fallback, a Slurm login node), so TensorFlow <= 2.11 gets the NumPy 1 it was built on.
The slim layer (``local.layer: slim``, a Slurm cluster's) resolves as of its TensorFlow's last release, any cloud."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cloudtrain.backends.runner import env_keys, venv
from cloudtrain.backends.runner.image import PIP_AS_OF, Interpreter, resolve_image
from cloudtrain.backends.slurm import envbuild
from cloudtrain.backends.slurm.backend import SlurmBackend
from cloudtrain.backends.slurm.cluster import OnCluster
from cloudtrain.config.load import load_config
from cloudtrain.spec import build_spec
from tests.slurm.test_slurm_config import NOW, write_config


def _find(version, setting=None):
    return Interpreter(sys.executable, version) if version in ("3.10", "3.12") and not setting else None


OLD = resolve_image("vertex", "2.11", find=_find)  # the image of 2023-03-20
NEW = resolve_image("sagemaker", "2.21", find=_find, slim=True)  # the slim layer: TF 2.21.x of 2026-03-06
SLIM = ("pip", "setuptools", "wheel", "tensorboard")


def test_the_images_day_is_each_installers_cutoff():
    assert OLD.date == "2023-03-20" and NEW.date == "2026-03-06"
    assert OLD.as_of() == ("--exclude-newer", "2023-03-20T23:59:59Z")
    assert OLD.as_of(pip=True) == ("--uploaded-prior-to", "2023-03-20T23:59:59Z")
    assert NEW.as_of(pip=True) == ("--uploaded-prior-to", "2026-03-06T23:59:59Z")
    undated = dataclasses.replace(NEW, date=None)  # a TensorFlow no image entry names: as of today
    assert undated.as_of() == undated.as_of(pip=True) == ()

    def python36(version: str, setting: str | None = None) -> Interpreter | None:
        return Interpreter("/p", version) if version == "3.6" else None

    py36 = resolve_image("sagemaker", "2.1", find=python36)
    assert py36.date and py36.as_of() and py36.as_of(pip=True) == ()  # no pip >= 26 runs on Python 3.6


def test_the_pip_fallback_installs_a_pip_that_knows_the_cutoff_then_resolves_with_it(tmp_path):
    ran: list[list[str]] = []

    def run(argv, **_):
        ran.append([str(a) for a in argv])
        return subprocess.CompletedProcess(argv, 0, "", "")

    venv._install_image_packages(tmp_path, OLD, run, None)
    python = str(env_keys.env_python(tmp_path))
    quiet = venv._PIP_QUIET
    assert ran == [
        [python, "-m", "pip", "install", *quiet, "--upgrade", PIP_AS_OF],
        [python, "-m", "pip", "install", *quiet, "--uploaded-prior-to", "2023-03-20T23:59:59Z", *OLD.packages],
    ]


@pytest.mark.parametrize(
    ("tf", "released", "sagemaker_image"),
    [("2.11", "2023-03-20", "2023-08-24"), ("2.17", "2024-10-24", "2024-10-24"), ("2.21", "2026-03-06", "2026-08-18")],
)
def test_the_slim_layer_resolves_as_of_its_tensorflows_last_release_on_every_cloud(tf, released, sagemaker_image):
    for cloud, image_day in (("vertex", released), ("sagemaker", sagemaker_image)):
        image, slim = (resolve_image(cloud, tf, find=_find, slim=s) for s in (False, True))
        assert slim.packages == (f"tensorflow=={tf}.*", *SLIM) and len(image.packages) > len(slim.packages)
        assert (image.date, slim.date) == (image_day, released)
        assert slim.as_of(pip=True) == ("--uploaded-prior-to", f"{released}T23:59:59Z")
        assert slim.key != dataclasses.replace(slim, date=None).key  # a layer built as of today is not reused


def _slurm_request(tmp_path: Path, monkeypatch, tf: str) -> dict:
    """What the Slurm backend sends its login node's builder for ``image.tensorflow: tf`` on CPU nodes:
    the backend's own image layer and :meth:`OnCluster._build_remotely`, the shell a recorder."""
    config = write_config(tmp_path, {"image": {"tensorflow": tf}, "machine": {"accelerator_count": 0}})
    spec = build_spec(load_config(config), now=NOW, suffix="abc123")
    backend = SlurmBackend(log=lambda line: None)
    image, _ = backend._image(spec)
    sent: list[list[str]] = []

    class Shell:
        def write(self, path, data, mode):
            pass

        def run(self, argv, **_):
            sent.append(argv)
            return subprocess.CompletedProcess(argv, 0, b'{"image_built": false}', b"")

    on_cluster = OnCluster(backend._image, backend._python, lambda line: None)
    on_cluster._build_remotely(Shell(), spec, image, (tmp_path / "pkg", "q", "s.tar.gz"), "the job environment")  # type: ignore[arg-type]
    return json.loads(sent[-1][-1])


@pytest.mark.parametrize(
    ("tf", "runs", "day"),
    [
        ("2.5", "2.11", "2023-03-20"),  # mapped to Vertex's oldest image, 2.11, as of its day: NumPy 1
        ("2.11", "2.11", "2023-03-20"),
        ("2.12", "2.12", "2023-07-05"),
        ("2.17", "2.17", "2024-10-24"),
    ],
)
def test_a_slurm_login_node_builds_the_slim_layer_as_of_the_images_day(tf, runs, day, tmp_path, monkeypatch):
    request = _slurm_request(tmp_path, monkeypatch, tf)
    assert request["image_packages"] == [f"tensorflow=={runs}.*", *SLIM]
    assert request["image_as_of"] == [PIP_AS_OF, "--uploaded-prior-to", f"{day}T23:59:59Z"]

    ran: list[list[str]] = []

    def run(argv: list[str]) -> str:
        ran.append(argv)
        return ""

    monkeypatch.setattr(envbuild, "run", run)
    monkeypatch.setattr(envbuild, "build", lambda final, key, steps, marker: steps(str(tmp_path / "env")) or True)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0))
    monkeypatch.setattr(envbuild, "site_dirs", lambda env: [str(tmp_path / "site")])
    (tmp_path / "site").mkdir()
    envbuild.main(["envbuild.py", json.dumps(request)])
    pip = [str(tmp_path / "env" / "bin" / "python"), "-m", "pip", "install", *envbuild.PIP]
    assert [argv for argv in ran if argv[:4] == pip[:4]] == [
        [*pip, "--upgrade", PIP_AS_OF],
        [*pip, "--uploaded-prior-to", f"{day}T23:59:59Z", f"tensorflow=={runs}.*", *SLIM],
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("tf", "numpy"), [("2.11", "1.24.2"), ("2.17", "1.26.4")])
def test_the_slurm_builders_pip_resolves_numpy_1_for_old_tensorflow(tf, numpy, tmp_path, monkeypatch):
    """The pip the login node runs (this venv's, >= 26.0), with the request's cutoff and packages, resolves
    the NumPy of the image's day; the same packages as of today get NumPy 2, which TF 2.11 cannot import."""
    request = _slurm_request(tmp_path, monkeypatch, tf)
    monkeypatch.undo()

    def resolved(cutoff: list[str]) -> dict[str, str]:
        pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--dry-run"]
        pip += ["--ignore-installed", "--only-binary=:all:", "--python-version", "3.10", "--target", str(tmp_path)]
        report = tmp_path / "report.json"
        out = subprocess.run(
            [*pip, "--report", str(report), *cutoff, *request["image_packages"]],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-1500:]
        return {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}

    assert resolved(request["image_as_of"][1:])["numpy"] == numpy
    if tf == "2.11":  # TF 2.11 sets no upper bound: today's resolution is the NumPy 2 it fails to import with
        assert int(resolved([])["numpy"].split(".")[0]) >= 2


@pytest.mark.slow
def test_resolved_as_of_the_images_day_tensorflow_2_11_gets_numpy_1_and_today_numpy_2():
    """What the cutoff resolves to, from uv's cache (the index only where the cache lacks something): the values
    the images had."""
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
        if out.returncode != 0 and "network was disabled" in out.stderr:  # a cold cache: from the index once
            cmd.remove("--offline")
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
