"""Same tree, same bytes; the name follows the content; the write is atomic."""

from __future__ import annotations

import gzip
import os
import tarfile
from pathlib import Path

import pytest

from cloudtrain.errors import PackagingError
from cloudtrain.packaging import archive as archive_module
from cloudtrain.packaging import build_sdist
from cloudtrain.packaging.archive import FIXED_MTIME, Member, write_archive
from tests.packaging.sdist_helpers import member_bytes, packaged, write


def test_rebuild_is_byte_identical_and_shares_the_name(mini, tmp_path):
    a = build_sdist(mini, tmp_path / "a")
    b = build_sdist(mini, tmp_path / "b")
    assert a.path.read_bytes() == b.path.read_bytes()
    assert (a.sha256, a.size, a.filename) == (b.sha256, b.size, b.filename)
    assert a.filename == f"mini_trainer-0.0.0-{a.sha256[:12]}.tar.gz"
    assert a.path == tmp_path / "a" / a.filename and a.size == a.path.stat().st_size


def test_rebuild_after_touching_mtimes_and_modes_is_identical(mini, tmp_path):
    first = build_sdist(mini, tmp_path / "out")
    for path in mini.rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
        if path.is_file():
            path.chmod(0o600)
    again = build_sdist(mini, tmp_path / "out")
    assert again.sha256 == first.sha256
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [first.filename]


def test_rebuild_of_a_copy_elsewhere_is_identical(mini, tmp_path):
    import shutil

    other = tmp_path / "elsewhere" / "mini_trainer"
    shutil.copytree(mini, other)
    assert build_sdist(other, tmp_path / "o2").sha256 == build_sdist(mini, tmp_path / "o1").sha256


@pytest.mark.parametrize(
    "change",
    [
        lambda root: write(root, "task.py", (root / "task.py").read_text() + "# tweak\n"),
        lambda root: write(root, "extra.py", ""),
        lambda root: (root / "model.py").chmod(0o755),
    ],
    ids=["edit", "new-file", "executable-bit"],
)
def test_a_content_change_changes_hash_and_name(mini, tmp_path, change):
    before = build_sdist(mini, tmp_path / "out")
    change(mini)
    after = build_sdist(mini, tmp_path / "out")
    assert after.sha256 != before.sha256 and after.filename != before.filename
    assert before.path.exists() and after.path.exists()


def test_requirements_and_version_are_part_of_the_content(mini, tmp_path):
    base = build_sdist(mini, tmp_path / "out")
    assert build_sdist(mini, tmp_path / "out", requirements=["numpy"]).sha256 != base.sha256
    assert build_sdist(mini, tmp_path / "out", version="0.1").sha256 != base.sha256


def test_archive_headers_are_normalized(mini, tmp_path):
    (mini / "run.sh").write_text("#!/bin/sh\n")
    (mini / "run.sh").chmod(0o775)
    (mini / "model.py").chmod(0o600)
    built = build_sdist(mini, tmp_path / "out")
    raw = built.path.read_bytes()
    assert raw[:3] == b"\x1f\x8b\x08"
    assert raw[3] == 0, "no FNAME (or any optional) field in the gzip header"
    assert raw[4:8] == b"\0\0\0\0", "gzip header time is 0"
    with tarfile.open(built.path) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names, key=lambda n: n.split("/"))
    assert names[0] == "mini_trainer-0.0.0"
    for m in members:
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (FIXED_MTIME, 0, 0, "", "")
        assert m.isdir() or m.isfile()
    modes = {m.name.split("/", 1)[-1]: m.mode for m in members}
    assert modes["mini_trainer/run.sh"] == 0o755
    assert modes["mini_trainer/model.py"] == 0o644
    assert modes["mini_trainer/configs"] == 0o755
    assert gzip.decompress(raw)  # a valid stream end to end


def test_layout_is_top_folder_with_metadata_and_package(mini, tmp_path):
    built = build_sdist(mini, tmp_path / "out", name="Mini-Trainer", version="1.0-RC1")
    assert (built.name, built.version) == ("mini_trainer", "1.0rc1")
    assert built.filename.startswith("mini_trainer-1.0rc1-")
    top = "mini_trainer-1.0rc1"
    assert built.files == (
        f"{top}/PKG-INFO",
        f"{top}/mini_trainer/__init__.py",
        f"{top}/mini_trainer/configs/default.json",
        f"{top}/mini_trainer/model.py",
        f"{top}/mini_trainer/requirements.txt",
        f"{top}/mini_trainer/task.py",
        f"{top}/pyproject.toml",
        f"{top}/setup.py",
    )


def test_output_folder_inside_the_package_is_not_packaged(mini):
    first = build_sdist(mini, mini / "dist")
    second = build_sdist(mini, mini / "dist")
    assert second.sha256 == first.sha256
    assert not any("dist" in p for p in packaged(second))


def test_failed_write_leaves_no_file(tmp_path):
    def broken():
        raise OSError(5, "Input/output error", "/src/pkg/big.bin")

    members = [Member("p-1/a.txt", data=b"a"), Member("p-1/pkg/big.bin", open=broken)]
    with pytest.raises(PackagingError, match=r"cannot read /src/pkg/big.bin: Input/output error"):
        write_archive(tmp_path / "out", "p-1", members)
    assert list((tmp_path / "out").iterdir()) == []


def test_failed_rename_leaves_no_partial_file_and_keeps_the_old_one(mini, tmp_path, monkeypatch):
    good = build_sdist(mini, tmp_path / "out")
    write(mini, "new.py", "")

    def no_space(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("cloudtrain.packaging.archive.os.replace", no_space)
    with pytest.raises(PackagingError, match=r"cannot write the package to .*out: No space left on device"):
        build_sdist(mini, tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == [good.filename]
    assert good.path.read_bytes()  # untouched


def test_interrupted_build_leaves_no_partial_file(mini, tmp_path, monkeypatch):
    real = archive_module._write_members

    def interrupted(tar, members):
        real(tar, members[:2])
        raise KeyboardInterrupt

    monkeypatch.setattr(archive_module, "_write_members", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_sdist(mini, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_unwritable_output_is_a_packaging_error(mini, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PackagingError, match=r"cannot write the package to .*file/out"):
        build_sdist(mini, blocker / "out")


def test_size_warning_names_the_biggest_files(mini, tmp_path):
    (mini / "weights.bin").write_bytes(os.urandom(40_000))
    (mini / "vocab.bin").write_bytes(os.urandom(20_000))
    built = build_sdist(mini, tmp_path / "out", size_warning_bytes=30_000)
    (warning,) = built.warnings
    assert built.filename in warning and "30000" not in warning
    assert "above the 29.3 KiB warning threshold" in warning
    assert "mini_trainer/weights.bin (39.06 KiB), mini_trainer/vocab.bin (19.53 KiB)"  # numbers.size in warning
    assert ".cloudtrainignore" in warning
    assert build_sdist(mini, tmp_path / "out").warnings == ()


def test_files_are_read_as_they_are_when_written(mini, tmp_path):
    built = build_sdist(mini, tmp_path / "out")
    with tarfile.open(built.path) as tar:
        body = member_bytes(tar, "mini_trainer-0.0.0/mini_trainer/task.py")
    assert body == (mini / "task.py").read_bytes()
    assert isinstance(built.path, Path)


def test_package_reached_through_a_symlink_keeps_the_link_name(mini, tmp_path):
    link = tmp_path / "trainer"
    os.symlink(mini, link)
    built = build_sdist(link, tmp_path / "out")
    assert built.name == "trainer"
    assert "trainer-0.0.0/trainer/task.py" in built.files
    with tarfile.open(built.path) as tar:
        assert "package_data={'trainer': ['**/*']}" in member_bytes(tar, "trainer-0.0.0/setup.py").decode()
