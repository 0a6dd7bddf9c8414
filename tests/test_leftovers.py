"""Temp folders and partial files of killed runs are swept; live ones are left alone."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from cloudtrain import leftovers
from cloudtrain.packaging import build_sdist


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temp_folders_of_gone_processes_are_swept(tmp_path):
    dead, alive = (
        tmp_path / f"cloudtrain-sourcedir-{_dead_pid()}-abc_1",
        tmp_path / f"cloudtrain-sourcedir-{os.getppid()}-x",
    )
    old = tmp_path / "cloudtrain-sourcedir-1-old"  # pid 1 lives; the folder is simply too old
    other = tmp_path / "cloudtrain-notes"
    for path in (dead, alive, old, other):
        path.mkdir()
        (path / "f").write_text("x")
    stamp = time.time() - leftovers.STALE_SECONDS - 60
    os.utime(old, (stamp, stamp))
    os.utime(other, (stamp, stamp))
    assert sorted(leftovers.sweep_temp_dirs(tmp_path)) == sorted([dead, old])
    assert alive.exists() and other.exists()


def test_a_temporary_dir_is_removed_on_the_way_out_even_on_error(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        with leftovers.temporary_dir("sourcedir") as tmp:
            assert tmp.name.startswith(f"cloudtrain-sourcedir-{os.getpid()}-")
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert list(tmp_path.iterdir()) == []


def test_stale_part_files_are_swept_when_a_package_is_built(tmp_path):
    out = tmp_path / "packages"
    out.mkdir()
    dead = out / f".trainer-0.1.{_dead_pid()}.k2j4_x.part"
    old = out / ".trainer-0.1.a8s7d.part"  # an older naming: no pid, an hour old
    mine = out / f".trainer-0.1.{os.getpid()}.zz.part"  # a build of this very process (another thread)
    for path in (dead, old, mine):
        path.write_bytes(b"partial")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    build_sdist(pkg, out)
    left = sorted(p.name for p in out.iterdir())
    assert mine.name in left and dead.name not in left and old.name not in left
    assert [n for n in left if not n.endswith(".part")] == [n for n in left if n.endswith(".tar.gz")]


def test_a_partial_data_download_of_a_gone_process_is_swept(tmp_path):
    from cloudtrain.data.cache import fetch
    from cloudtrain.data.stores import ObjectInfo

    class OneFile:
        scheme = "s3"

        def list(self, prefix):
            return [ObjectInfo(prefix + "a.txt", 1, "v1")]

        def download(self, key, dest):
            dest.write_text("a")

    dead = tmp_path / f".partial-old-download-{_dead_pid()}"
    alive = tmp_path / f".partial-other-{os.getppid()}"
    for path in (dead, alive):
        (path / "x").mkdir(parents=True)
    fetch("s3://bucket/data/", tmp_path, store=OneFile())
    assert not dead.exists() and alive.exists()
