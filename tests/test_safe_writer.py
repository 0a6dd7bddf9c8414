"""The one writer of a job's files on this machine (``cloudtrain.backends.files``), called directly: what a
download and TensorBoard's mirror rely on, each value checked (the CLI-level cases are tests/test_hostile_files.py)."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

import pytest

from cloudtrain.backends.files import PARTIAL, Locked, checksum_matches, landing, write_file
from cloudtrain.errors import BackendError, UsageError

DATA = bytes(range(256)) * 40  # 10,240 bytes


def reader(data: bytes = DATA, block: int = 1000, calls: list[int] | None = None):
    """``read(offset)`` as a Folder gives it: the bytes from ``offset`` in blocks; each offset asked recorded."""

    def read(offset: int):
        if calls is not None:
            calls.append(offset)
        for at in range(offset, len(data), block):
            yield data[at : at + block]

    return read


def test_a_new_file_is_written_whole_through_a_partial_file_renamed_into_place(tmp_path):
    seen: list[int] = []
    assert write_file(tmp_path, "a/b/c.bin", reader(), size=len(DATA), progress=seen.append) == len(DATA)
    assert (tmp_path / "a" / "b" / "c.bin").read_bytes() == DATA
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["c.bin"]  # no partial left
    assert seen == list(range(1000, len(DATA), 1000)) + [len(DATA)]  # bytes so far, after each block


def test_a_partial_file_is_resumed_from_its_end_and_only_the_rest_is_read(tmp_path):
    (tmp_path / f"m.bin{PARTIAL}").write_bytes(DATA[:3000])
    calls: list[int] = []
    assert write_file(tmp_path, "m.bin", reader(calls=calls), size=len(DATA)) == len(DATA) - 3000
    assert calls == [3000] and (tmp_path / "m.bin").read_bytes() == DATA


def test_a_partial_file_longer_than_the_source_starts_over(tmp_path):
    """The source was rewritten smaller since the first try."""
    (tmp_path / f"m.bin{PARTIAL}").write_bytes(b"x" * (len(DATA) + 5))
    calls: list[int] = []
    assert write_file(tmp_path, "m.bin", reader(calls=calls), size=len(DATA)) == len(DATA)
    assert calls == [0] and (tmp_path / "m.bin").read_bytes() == DATA


def test_a_file_the_size_of_the_source_is_not_read_again(tmp_path):
    (tmp_path / f"m.bin{PARTIAL}").write_bytes(DATA)
    assert write_file(tmp_path, "m.bin", reader(), size=len(DATA)) == 0
    assert (tmp_path / "m.bin").read_bytes() == DATA


def test_a_short_read_keeps_the_partial_file_for_the_next_try(tmp_path):
    with pytest.raises(BackendError) as info:
        write_file(tmp_path, "m.bin", reader(DATA[:4000]), size=len(DATA))
    assert (info.value.message, info.value.hint) == (
        f"m.bin: got 4000 bytes of {len(DATA)}",
        "run the same command again: it resumes",
    )
    assert (tmp_path / f"m.bin{PARTIAL}").read_bytes() == DATA[:4000] and not (tmp_path / "m.bin").exists()


def test_a_failed_check_removes_the_partial_file_and_names_the_file(tmp_path):
    checked: list[Path] = []

    def check(path: Path) -> str | None:
        checked.append(path)
        return "MD5 mismatch"

    with pytest.raises(BackendError) as info:
        write_file(tmp_path, "m.bin", reader(), size=len(DATA), check=check)
    assert (info.value.message, info.value.hint) == ("m.bin: MD5 mismatch", "run the same command again")
    assert checked == [tmp_path / f"m.bin{PARTIAL}"] and os.listdir(tmp_path) == []


def test_a_file_with_a_mode_is_private_while_written_then_given_its_mode(tmp_path):
    modes: list[int] = []

    def read(offset: int):
        modes.append(stat.S_IMODE(os.stat(tmp_path / f"key{PARTIAL}").st_mode))
        yield DATA

    old = os.umask(0o022)
    try:
        write_file(tmp_path, "key", read, size=len(DATA), mode=0o100640)
        write_file(tmp_path, "plain", reader(), size=len(DATA))  # no mode: the umask's
    finally:
        os.umask(old)
    assert modes == [0o600]
    assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o644


def test_without_a_partial_file_the_copy_itself_grows(tmp_path):
    """TensorBoard's mirror: an event file only grows; its new bytes are appended in place."""
    (tmp_path / "events").write_bytes(DATA[:5000])
    assert write_file(tmp_path, "events", reader(), size=len(DATA), partial=False) == len(DATA) - 5000
    assert (tmp_path / "events").read_bytes() == DATA and os.listdir(tmp_path) == ["events"]


def test_a_folder_where_the_file_goes_keeps_the_partial_file(tmp_path):
    (tmp_path / "m.bin").mkdir()
    with pytest.raises(UsageError) as info:
        write_file(tmp_path, "m.bin", reader(), size=len(DATA))
    assert (info.value.message, info.value.hint) == (
        f"{tmp_path / 'm.bin'} is a folder: the file is kept as m.bin{PARTIAL}",
        "remove the folder",
    )
    assert (tmp_path / f"m.bin{PARTIAL}").read_bytes() == DATA


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "/etc/passwd", ""])
def test_a_name_that_climbs_out_of_the_folder_is_refused(rel, tmp_path):
    with pytest.raises(UsageError) as info:
        landing(tmp_path / "dl", rel)
    assert (info.value.message, info.value.hint) == (
        f"refusing the file name {rel!r}: it points outside {tmp_path / 'dl'}",
        "rename the object",
    )


def test_a_folder_on_the_way_that_is_a_link_or_a_file_is_refused(tmp_path):
    root = tmp_path / "dl"
    root.mkdir()
    os.symlink(tmp_path, root / "out")
    (root / "file").write_text("")
    for name, what in (("out", "a link"), ("file", "not a folder")):
        with pytest.raises(UsageError) as info:
            landing(root, f"{name}/x/y")
        assert (info.value.message, info.value.hint) == (
            f"{root / name} is {what}: not written through",
            "remove it, or download into another folder",
        )
    assert landing(root, "new/deep/file") == root / "new" / "deep" / "file" and (root / "new" / "deep").is_dir()


def test_a_lock_is_one_at_a_time_and_a_download_leaves_no_lock_file(tmp_path):
    root = tmp_path / "a" / "dl"  # made with its parents
    with Locked(root):
        assert stat.S_IMODE((root / ".cloudtrain-lock").stat().st_mode) == 0o600
        with pytest.raises(UsageError) as info:
            Locked(root)
        assert (info.value.message, info.value.hint) == (
            f"another download into {root} is running",
            "wait for it, or pick another folder",
        )
    assert os.listdir(root) == []
    with Locked(root, wait=True):  # a refresh's cache keeps its lock file
        pass
    assert os.listdir(root) == [".cloudtrain-lock"]


def test_a_file_matches_the_stores_md5_or_crc32c_and_none_is_no_answer(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(DATA)
    md5 = hashlib.md5(DATA).hexdigest()
    assert checksum_matches(path, ("md5", md5)) is True
    assert checksum_matches(path, ("md5", "0" * 32)) is False
    assert checksum_matches(path, None) is None
    assert checksum_matches(path, ("sha1", md5)) is None  # a kind this machine does not compute
    google_crc32c = pytest.importorskip("google_crc32c")
    crc = base64.b64encode(google_crc32c.Checksum(DATA).digest()).decode()
    assert checksum_matches(path, ("crc32c", crc)) is True
    assert checksum_matches(path, ("crc32c", "AAAAAA==")) is False
    big = tmp_path / "big"  # over one read block (1 MiB)
    big.write_bytes(DATA * 120)
    assert checksum_matches(big, ("md5", hashlib.md5(DATA * 120).hexdigest())) is True
    assert checksum_matches(big, ("crc32c", base64.b64encode(google_crc32c.Checksum(DATA * 120).digest()).decode()))


def test_a_partial_file_swapped_while_written_is_not_renamed_into_place(tmp_path):
    partial = tmp_path / f"m.bin{PARTIAL}"

    def read(offset: int):
        yield DATA[:5000]
        os.rename(partial, tmp_path / "moved")  # another process puts its own file in the partial's place
        partial.write_bytes(DATA[:5000])
        yield DATA[5000:]

    with pytest.raises(UsageError) as info:
        write_file(tmp_path, "m.bin", read, size=len(DATA))
    assert info.value.message == f"{partial} was replaced while it was written: not renamed into place"
    assert not (tmp_path / "m.bin").exists()


def test_a_link_in_the_partial_files_place_is_named_with_the_fix(tmp_path):
    os.symlink(tmp_path / "elsewhere", tmp_path / f"m.bin{PARTIAL}")
    with pytest.raises(UsageError) as info:
        write_file(tmp_path, "m.bin", reader(), size=len(DATA))
    assert (info.value.message, info.value.hint) == (
        f"{tmp_path / ('m.bin' + PARTIAL)} is a link, not a file cloudtrain wrote: not written through",
        "remove it and run the same command again",
    )
    assert not (tmp_path / "elsewhere").exists()


def test_a_refresh_waits_for_the_lock_a_download_holds(tmp_path):
    import threading

    order: list[str] = []
    first = Locked(tmp_path, wait=True)

    def second() -> None:
        with Locked(tmp_path, wait=True):
            order.append("second")

    waiter = threading.Thread(target=second)
    waiter.start()
    waiter.join(0.5)
    order.append("first released")
    first.__exit__()
    waiter.join(10)
    assert order == ["first released", "second"]


def test_a_local_folder_lists_and_reads_what_is_there_and_names_what_is_not(tmp_path):
    from cloudtrain.backends.files import LocalFolder, StoredFile

    (tmp_path / "out" / "logs").mkdir(parents=True)
    (tmp_path / "out" / "m.bin").write_bytes(DATA)
    (tmp_path / "out" / "logs" / "x").write_text("x")
    folder = LocalFolder(tmp_path / "out", skip=("logs",))
    assert folder.notes == [] and LocalFolder(tmp_path / "none").list() == []
    assert [f.path for f in folder.list()] == ["m.bin"] and folder.notes == []
    assert isinstance(folder.list()[0], StoredFile) and folder.list()[0].size == len(DATA)
    assert b"".join(folder.read("m.bin", 100, 300)) == DATA[100:300]
    assert b"".join(folder.read("m.bin", 10_000)) == DATA[10_000:]
    with pytest.raises(UsageError) as info:
        list(folder.read("gone.bin"))
    assert info.value.message == f"{tmp_path / 'out'}: gone.bin is gone: not read"  # not "a link to …"
