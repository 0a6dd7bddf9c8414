"""The cached package environment: where it lives, what it reuses, and that it is built atomically."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from cloudtrain.backends.runner import env_keys, venv
from cloudtrain.errors import PackagingError
from cloudtrain.leftovers import pid_alive

from .conftest import bare_image


def test_cache_root_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert env_keys.cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("CLOUDTRAIN_CACHE_DIR")
    assert env_keys.cache_root() == tmp_path / "xdg" / "cloudtrain"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert env_keys.cache_root() == tmp_path / "home" / ".cache" / "cloudtrain"


def test_env_dir_names_package_and_image(fake_package):
    image = bare_image()
    other = replace(image, packages=("setuptools>=62.3", "wheel", "tensorboard"))
    a, b = env_keys.env_dir(fake_package, image), env_keys.env_dir(fake_package, other)
    assert a != b and a.name.startswith("pkg-") and a.parent.name == "envs"
    assert env_keys.image_dir(image).name == f"image-{image.key}" != env_keys.image_dir(other).name


def test_built_once_then_reused_and_isolated_from_cloudtrains_env(fake_package, tmp_path):
    first = venv.ensure_env(fake_package, bare_image(), root=tmp_path)
    assert not first.cached and first.image is not None
    again = venv.ensure_env(fake_package, bare_image(), root=tmp_path)
    assert again.cached and again.path == first.path and again.setup_seconds < 0.5
    marker = json.loads((first.path / venv.MARKER).read_text())
    deps = env_keys.requirements_key(fake_package.requirements, bare_image(), env_keys.index_settings())
    assert marker["key"] == fake_package.sha256 and marker["image"] == f"deps-{deps}"
    assert json.loads((tmp_path / "envs" / f"deps-{deps}" / venv.MARKER).read_text())["image"] == first.image.name
    assert sorted(p.name for p in (tmp_path / "envs").iterdir()) == sorted(
        [first.path.name, f"deps-{deps}", first.image.name]
    )
    probe = (
        "import fakepkg, sys, importlib.util as u; print(fakepkg.__file__); print(sys.prefix);"
        " print(u.find_spec('yaml') is None, u.find_spec('click') is None, u.find_spec('setuptools') is not None)"
    )
    out = subprocess.run([str(first.python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True)
    pkg_file, prefix, *found = out.stdout.split()
    assert Path(pkg_file).is_relative_to(first.path)  # the package: installed into its env
    assert Path(prefix) == first.path  # the env works after the rename from its temporary folder
    # cloudtrain's own dependencies (PyYAML, click) are not there; the image layer's setuptools is
    assert found == ["True", "True", "True"]


def test_the_image_layer_is_built_once_for_every_package(fake_package, tmp_path):
    from cloudtrain.packaging import build_sdist

    pkg = tmp_path / "second"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    second = build_sdist(pkg, tmp_path / "dist", requirements=["wheel"])  # satisfied by the image layer
    calls = []

    def recording(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.run(cmd, **kwargs)

    a = venv.ensure_env(fake_package, bare_image(), root=tmp_path / "c", run=recording)
    image_venv = lambda c: "venv" in c[:3] and "--without-pip" not in c  # noqa: E731  (uv venv or -m venv)
    image_builds = sum(1 for c in calls if image_venv(c))
    b = venv.ensure_env(second, bare_image(), root=tmp_path / "c", run=recording)
    assert a.image == b.image and a.path != b.path and b.image is not None
    assert sum(1 for c in calls if image_venv(c)) == image_builds == 1
    assert not b.online  # its requirement came from the image layer, offline
    where = (
        "import importlib.metadata as m; print(m.distribution('second')._path); print(m.distribution('wheel')._path)"
    )
    second_at, wheel_at = subprocess.run([str(b.python), "-c", where], capture_output=True, text=True).stdout.split()
    assert Path(second_at).is_relative_to(b.path) and Path(wheel_at).is_relative_to(b.image)


def _needing(tmp_path: Path, requirement: str = "wheel"):
    """A package with one requirement (the image layer has ``wheel``): its requirements layer runs pip."""
    from cloudtrain.packaging import build_sdist

    pkg = tmp_path / "needing"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    return build_sdist(pkg, tmp_path / "dist", requirements=[requirement])


def test_an_interrupted_install_leaves_no_cached_env(tmp_path):
    venv.ensure_image(bare_image(), root=tmp_path)

    def interrupted(cmd, **kwargs):
        if cmd[1:3] == ["-m", "pip"]:
            raise KeyboardInterrupt
        return subprocess.run(cmd, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        venv.ensure_env(_needing(tmp_path), bare_image(), root=tmp_path, run=interrupted)
    assert [p.name for p in (tmp_path / "envs").iterdir()] == [f"image-{bare_image().key}"]


def test_stale_builds_of_dead_processes_are_removed(fake_package, tmp_path):
    envs = tmp_path / "envs"
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = envs / f".tmp-whatever-{dead.pid}"
    (stale / "bin").mkdir(parents=True)
    damaged = env_keys.env_dir(fake_package, bare_image(), tmp_path)
    (damaged / "bin").mkdir(parents=True)  # a folder without a marker is never trusted
    env = venv.ensure_env(fake_package, bare_image(), root=tmp_path)
    assert not stale.exists() and not env.cached and (env.path / venv.MARKER).is_file()


def test_a_requirement_that_cannot_be_installed_is_one_line_exit_2(tmp_path):
    from cloudtrain.packaging import build_sdist

    pkg = tmp_path / "needy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    package = build_sdist(pkg, tmp_path / "dist", requirements=["cloudtrain-no-such-dist-xyz>=1"])
    calls = []

    def offline(cmd, **kwargs):  # no network in tests: the index has no such project
        calls.append(cmd)
        if "cloudtrain-no-such-dist-xyz>=1" in cmd and "--no-index" not in cmd:
            return subprocess.CompletedProcess(
                cmd, 1, "", "ERROR: No matching distribution found for cloudtrain-no-such-dist-xyz>=1"
            )
        return subprocess.run(cmd, **kwargs)

    with pytest.raises(PackagingError) as error:
        venv.ensure_env(package, bare_image(), root=tmp_path / "cache", run=offline)
    message = str(error.value)
    assert "requirement 'cloudtrain-no-such-dist-xyz>=1' of needy 0.0.0 cannot be installed" in message
    assert "\n" not in message and error.value.exit_code == 2
    assert any("--no-index" in c for c in calls if c[1:3] == ["-m", "pip"])
    assert not any(p.name.startswith(("pkg-", "deps-")) for p in (tmp_path / "cache" / "envs").iterdir())


def test_pid_alive():
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert pid_alive(os.getpid()) and not pid_alive(gone.pid)


def test_pip_temp_folders_live_in_cloudtrains_temp_folder_and_go_with_an_interruption(tmp_path, monkeypatch):
    """pip unpacks into $TMPDIR (~600 MB for TensorFlow); a SIGTERM (which unwinds as Ctrl-C) during
    a first build left those folders behind each time (issue 27)."""
    import tempfile

    system_tmp = tmp_path / "tmp"
    system_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(system_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    venv.ensure_image(bare_image(), root=tmp_path)
    seen = []

    def interrupted(cmd, **kwargs):
        if cmd[1:3] == ["-m", "pip"]:
            seen.append(Path(os.environ["TMPDIR"]))
            (seen[-1] / "pip-unpack-x1y2").mkdir()  # as pip does, before the interruption reaches it
            raise KeyboardInterrupt
        return subprocess.run(cmd, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        venv.ensure_env(_needing(tmp_path), bare_image(), root=tmp_path, run=interrupted)
    assert seen and seen[0].parent == system_tmp and seen[0].name.startswith(f"cloudtrain-build-{os.getpid()}-")
    assert list(system_tmp.iterdir()) == []  # pip's folder went with cloudtrain's
    assert os.environ["TMPDIR"] == str(system_tmp)


def test_a_package_env_whose_image_layer_is_gone_is_not_reused(tmp_path):
    """The .pth of a package env names its image layer; when that folder is gone (a cluster test's
    workdir that was linked into the cache and deleted), the env would start without TensorFlow."""
    from cloudtrain.backends.runner.venv import IMAGE_PTH, image_layer_present

    layer = tmp_path / "image" / "lib" / "python3.10" / "site-packages"
    layer.mkdir(parents=True)
    site = tmp_path / "pkg" / "lib" / "python3.10" / "site-packages"
    site.mkdir(parents=True)
    (site / IMAGE_PTH).write_text(f"import site; site.addsitedir({str(layer)!r})\n")
    assert image_layer_present(tmp_path / "pkg")
    layer.rmdir()
    assert not image_layer_present(tmp_path / "pkg")


def test_the_requirements_key_is_what_decides_the_environment_and_never_the_code(fake_package, tmp_path):
    """Order and spacing of the requirements do not matter; a pin, the image and the index do."""
    image = bare_image()
    key = env_keys.requirements_key(["numpy>=1.26", "pandas"], image, (("PIP_INDEX_URL", "https://pypi.org/simple"),))
    same = env_keys.requirements_key(["pandas", "numpy >=1.26"], image, (("PIP_INDEX_URL", "https://pypi.org/simple"),))
    assert key == same
    assert key != env_keys.requirements_key(
        ["pandas", "numpy>=1.27"], image, (("PIP_INDEX_URL", "https://pypi.org/simple"),)
    )
    assert key != env_keys.requirements_key(
        ["pandas", "numpy>=1.26"], image, (("PIP_INDEX_URL", "https://mirror/simple"),)
    )
    other_image = replace(image, packages=("setuptools>=62.3", "wheel", "tensorboard"))
    assert key != env_keys.requirements_key(
        ["pandas", "numpy>=1.26"], other_image, (("PIP_INDEX_URL", "https://pypi.org/simple"),)
    )
    assert env_keys.index_settings({"PIP_INDEX_URL": "u", "PIP_CERT": "c", "PIP_FIND_LINKS": "/w"}) == (
        ("PIP_INDEX_URL", "u"),
        ("PIP_FIND_LINKS", "/w"),
    )
    # two builds of different code with the same requirements: one requirements layer, two package layers
    edited = replace(fake_package, sha256="0" * 64)
    assert env_keys.env_dir(edited, image, tmp_path) != env_keys.env_dir(fake_package, image, tmp_path)
    assert env_keys.env_dir(edited, image, tmp_path).parent == tmp_path / "envs"
