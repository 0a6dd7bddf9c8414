"""The edit–run loop of a user's own package (issue 40): a code-only edit reuses the requirements layer
with no network and installs only the package; changed requirements with the index cut are one line
naming the requirement that needs it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.runner import venv
from cloudtrain.errors import CloudUnreachable, ExitCode
from cloudtrain.packaging import build_sdist
from tests.fakes.package_index import PackageIndex

from .conftest import bare_image, make_spec

PACKAGE = Path(__file__).resolve().parents[2] / "packages" / "edit_loop"


@pytest.fixture
def loop(tmp_path, monkeypatch):
    """The user's project (a copy of tests/packages/edit_loop), an index serving its requirement, and a
    backend on the bare image with a cache of its own."""
    project = tmp_path / "project"
    shutil.copytree(PACKAGE, project)
    cache = tmp_path / "cache"
    venv.ensure_image(bare_image(), root=cache)  # the stand-in for the cloud's image: there before the loop
    index = PackageIndex(tmp_path / "index")
    index.add("ct-loop-dep", "1.0", "__version__ = '1.0'\n")
    monkeypatch.setenv("PIP_INDEX_URL", index.url)
    for name in ("PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    backend = LocalBackend(
        cache_root=cache, image_for=lambda spec: bare_image(), log=lambda m: None, gpu_count=lambda: 0
    )
    yield project / "looptrainer", index, backend, cache
    index.stop() if index._thread.is_alive() else None


def _run(backend, tmp_path, package, n):
    spec = make_spec(tmp_path, module="looptrainer.task", output_dir=str(tmp_path / f"run{n}"))
    job = backend.submit(spec, package)
    status = job.wait()
    return job, status, [line.message for line in job.logs()]


def _layers(cache: Path, prefix: str) -> list[str]:
    return sorted(p.name for p in (cache / "envs").iterdir() if p.name.startswith(prefix))


def test_a_code_only_edit_reuses_the_requirements_with_the_index_cut(loop, tmp_path):
    folder, index, backend, cache = loop
    first = build_sdist(folder, tmp_path / "dist")
    job, status, lines = _run(backend, tmp_path, first, 1)
    assert status.state is JobState.SUCCEEDED, lines[-20:]
    assert "training with ct_loop_dep 1.0, code v1" in lines
    assert any("/simple/ct-loop-dep/" in r for r in index.requests)  # the first run did use the index
    deps = _layers(cache, "deps-")
    assert len(deps) == 1

    index.stop()  # the network is gone; the requirements stay as they were
    task = folder / "task.py"
    task.write_text(task.read_text().replace('VERSION = "v1"', 'VERSION = "v2"'))
    edited = build_sdist(folder, tmp_path / "dist")
    assert edited.sha256 != first.sha256 and edited.requirements == first.requirements
    job, status, lines = _run(backend, tmp_path, edited, 2)
    assert status.state is JobState.SUCCEEDED, lines[-20:]
    assert "training with ct_loop_dep 1.0, code v2" in lines  # the new code, on the old requirements
    assert _layers(cache, "deps-") == deps  # not rebuilt
    assert len(_layers(cache, "pkg-")) == 2  # the edit built only the package's own layer
    env = job.environment
    assert env.code_only and not env.cached and not env.online
    assert any("reused, the package's code installed in" in line for line in lines)

    again = _run(backend, tmp_path, edited, 3)[0].environment  # no edit: everything reused
    assert again.cached and again.path == env.path


def test_changed_requirements_with_the_index_cut_name_the_one_that_needs_it(loop, tmp_path):
    folder, index, backend, cache = loop
    status = _run(backend, tmp_path, build_sdist(folder, tmp_path / "dist"), 1)[1]
    assert status.state is JobState.SUCCEEDED
    index.stop()
    (folder / "requirements.txt").write_text("ct-loop-dep==1.0\nct-loop-extra>=2.1\n")
    changed = build_sdist(folder, tmp_path / "dist")
    with pytest.raises(CloudUnreachable) as error:
        _run(backend, tmp_path, changed, 2)
    message = str(error.value)
    assert "\n" not in message and error.value.exit_code == ExitCode.UNREACHABLE
    assert message.startswith("requirement 'ct-loop-extra>=2.1' of looptrainer 0.0.0 is not in the local")
    assert "package index cannot be reached" in message and "requirements changed" in message
    assert "ct-loop-dep" not in message  # the pin that is fine is not blamed
    assert len(_layers(cache, "deps-")) == 1  # nothing half-built was kept


def test_a_first_run_with_the_index_cut_names_what_it_needs_and_says_nothing_was_built(loop, tmp_path):
    folder, index, backend, cache = loop
    index.stop()
    with pytest.raises(CloudUnreachable) as error:
        _run(backend, tmp_path, build_sdist(folder, tmp_path / "dist"), 1)
    message = str(error.value)
    assert message.startswith("requirement 'ct-loop-dep==1.0' of looptrainer 0.0.0 is not in the local environments")
    assert "no environment of it was built on this image yet" in message and "changed" not in message
