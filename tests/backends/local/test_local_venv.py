"""The cached package environment: where it lives, what it reuses, and that it is built atomically."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from cloudtrain.backends.local import venv
from cloudtrain.errors import BackendError


def test_cache_root_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert venv.cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("CLOUDTRAIN_CACHE_DIR")
    assert venv.cache_root() == tmp_path / "xdg" / "cloudtrain"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert venv.cache_root() == tmp_path / "home" / ".cache" / "cloudtrain"


def test_env_key_names_package_and_interpreter():
    key = venv.env_key("ab" * 32, base_prefix="/some/venv")
    assert key.startswith("abababababababab-py3") and key != venv.env_key("ab" * 32, base_prefix="/other")


def test_built_once_then_reused_layered_on_this_interpreter(fake_package, tmp_path):
    first = venv.ensure_env(fake_package, root=tmp_path)
    assert not first.cached and not first.online
    again = venv.ensure_env(fake_package, root=tmp_path)
    assert again.cached and again.path == first.path and again.setup_seconds < 0.1
    marker = json.loads((first.path / venv.MARKER).read_text())
    assert marker["sha256"] == fake_package.sha256
    assert not list(first.path.parent.glob(".tmp-*"))
    probe = "import fakepkg, yaml, sys; print(fakepkg.__file__); print(yaml.__file__); print(sys.prefix)"
    out = subprocess.run([str(first.python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True)
    pkg_file, yaml_file, prefix = out.stdout.split()
    assert Path(pkg_file).is_relative_to(first.path)  # the package: installed into the env
    assert not Path(yaml_file).is_relative_to(first.path)  # a dependency: reused from cloudtrain's env
    assert Path(prefix) == first.path  # the env works after the rename from its temporary folder


def test_an_interrupted_install_leaves_no_cached_env(fake_package, tmp_path):
    def interrupted(cmd, **kwargs):
        if "pip" in cmd:
            raise KeyboardInterrupt
        return subprocess.run(cmd, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        venv.ensure_env(fake_package, root=tmp_path, run=interrupted)
    envs = tmp_path / "envs"
    assert list(envs.iterdir()) == []  # neither the final env nor the temporary build


def test_stale_builds_of_dead_processes_are_removed(fake_package, tmp_path):
    envs = tmp_path / "envs"
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = envs / f".tmp-whatever-{dead.pid}"
    (stale / "bin").mkdir(parents=True)
    damaged = venv.env_dir(fake_package.sha256, tmp_path)
    (damaged / "bin").mkdir(parents=True)  # a folder without a marker is never trusted
    env = venv.ensure_env(fake_package, root=tmp_path)
    assert not stale.exists() and not env.cached and (env.path / venv.MARKER).is_file()


def test_a_missing_requirement_is_one_clear_error(tmp_path):
    from cloudtrain.packaging import build_sdist

    pkg = tmp_path / "needy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    package = build_sdist(pkg, tmp_path / "dist", requirements=["cloudtrain-no-such-dist-xyz>=1"])
    calls = []

    def offline(cmd, **kwargs):  # no network in tests: the index "cannot be reached"
        calls.append(cmd)
        if "pip" in cmd and "--no-index" not in cmd:
            return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found for x")
        return subprocess.run(cmd, **kwargs)

    started = time.monotonic()
    with pytest.raises(BackendError) as error:
        venv.ensure_env(package, root=tmp_path / "cache", run=offline)
    message = str(error.value)
    assert "'cloudtrain-no-such-dist-xyz>=1'" in message and "pip install" in message
    assert "\n" not in message
    assert any("--no-index" in c for c in calls if "pip" in c)
    assert time.monotonic() - started < 60
    assert list((tmp_path / "cache" / "envs").iterdir()) == []


def test_pid_alive():
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert venv.pid_alive(os.getpid()) and not venv.pid_alive(gone.pid)
