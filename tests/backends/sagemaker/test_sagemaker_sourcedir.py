"""sourcedir.tar.gz: reproducible, laid out for the TF container, and its launcher really runs the module."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker import BACKEND, cloudtrain_launch
from cloudtrain.backends.sagemaker.sourcedir import write_sourcedir
from cloudtrain.spec import PackageSpec
from tests.backends.sagemaker.conftest import make_spec
from tests.packaging.sdist_helpers import member_bytes

PARENT_SITE = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "sagemaker_training").is_dir())


def test_two_builds_are_byte_identical_and_laid_out_for_the_container(build_package, tmp_path: Path) -> None:
    package = build_package()
    first = write_sourcedir(package, tmp_path / "a.tar.gz")
    os.utime(package.path, (0, 0))  # the sdist's own mtime must not leak in
    second = write_sourcedir(package, tmp_path / "b.tar.gz")
    assert first.sha256 == second.sha256
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()

    with tarfile.open(first.path) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == ["cloudtrain_launch.py", "dist", f"dist/{package.filename}"]
        assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {(0, 0, "", "", 315532800)}
        assert member_bytes(tar, f"dist/{package.filename}") == Path(package.path).read_bytes()
    raw = (tmp_path / "a.tar.gz").read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip header time 0


def test_launcher_builds_the_same_command_line_as_the_spec() -> None:
    spec = make_spec()
    params = BACKEND.render(spec, _package_stub())
    hps = {k: json.loads(v) for k, v in params["HyperParameters"].items()}
    hps["_tuning_objective_metric"] = "loss"  # SageMaker adds this for tuning jobs; never passed on
    command = cloudtrain_launch.module_command(hps, python="python")
    assert command == ["python", "-m", "trainer.task", *spec.module_args()]


def _package_stub():
    from tests.backends.sagemaker.conftest import fake_package

    return fake_package()


@pytest.fixture
def container_python(tmp_path: Path) -> Path:
    """A fresh venv (the "image"), seeing this environment's pip, setuptools and sagemaker-training."""
    venv = tmp_path / "image"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "parent.pth").write_text(PARENT_SITE + "\n")
    # The toolkit imports TensorFlow only to list its exception classes: keep it out (30 s).
    (site / "tensorflow").mkdir()
    (site / "tensorflow" / "__init__.py").write_text("raise ImportError('no TensorFlow in this test image')\n")
    return venv / "bin" / "python"


#: What the TF training container's entry point does (sagemaker_tensorflow_container.training,
#: without TF): read the SageMaker files, then sagemaker_training.entry_point.run.
CONTAINER_MAIN = textwrap.dedent(
    """
    import sys
    from sagemaker_training import entry_point, environment, errors, mapping

    env = environment.Environment()
    try:
        entry_point.run(
            uri=sys.argv[1],  # sagemaker_submit_directory, downloaded
            user_entry_point=env.user_entry_point,
            args=mapping.to_cmd_args(env.hyperparameters),
            env_vars=env.to_env_vars(),
            capture_error=True,
        )
    except errors.ExecuteUserScriptError as exc:
        print("USER SCRIPT FAILED", exc.return_code)
        sys.exit(int(exc.return_code))
    """
)


def _run_in_container(
    python: Path, sourcedir: Path, hyperparameters: dict, tmp_path: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    base = tmp_path / "opt" / "ml"
    config = base / "input" / "config"
    config.mkdir(parents=True)
    (config / "hyperparameters.json").write_text(json.dumps(hyperparameters))
    (config / "resourceconfig.json").write_text(json.dumps({"current_host": "algo-1", "hosts": ["algo-1"]}))
    (config / "inputdataconfig.json").write_text("{}")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SAGEMAKER_BASE_DIR": str(base),
        "SM_STUDIO_LOCAL_MODE": "true",  # skip the wait for algo-N host names to resolve
        "PIP_NO_INDEX": "1",  # offline: the package has no requirements to fetch
        "PIP_CACHE_DIR": str(tmp_path / "pip-cache"),
        **(extra_env or {}),  # the job's Environment
    }
    main = tmp_path / "container_main.py"
    main.write_text(CONTAINER_MAIN)
    return subprocess.run(
        [str(python), str(main), str(sourcedir)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_the_container_toolkit_runs_the_module_from_the_installed_sdist(
    build_package, container_python: Path, tmp_path: Path
) -> None:
    package = build_package(name="probe_trainer")
    spec = make_spec(
        package=PackageSpec(
            path=Path("/src/probe_trainer"), module="probe_trainer.task", requirements=(), name=None, version="0.1"
        ),
        args=("--data", "s3://bucket/mnist data"),
    )
    spec = dataclasses.replace(spec, hyperparameters={**spec.hyperparameters, "exit_code": 3})
    hps = BACKEND.render(spec, package)["HyperParameters"]
    sourcedir = write_sourcedir(package, tmp_path / "sourcedir.tar.gz").path

    result = _run_in_container(container_python, sourcedir, hps, tmp_path)
    out = result.stdout + result.stderr

    assert "Successfully installed probe-trainer-0.1" in out or "Successfully installed probe_trainer-0.1" in out, out
    argv = json.loads(next(line for line in out.splitlines() if line.startswith("task argv "))[len("task argv ") :])
    assert argv == list(spec.module_args()), out
    task_file = next(line for line in out.splitlines() if line.startswith("task file "))[len("task file ") :]
    assert task_file.startswith(str(tmp_path / "image")) and "site-packages" in task_file, out
    assert "USER SCRIPT FAILED 3" in out and result.returncode == 3, out
