"""Hostile run files, third round (issue 48, deliverables 3 and 4), beside tests/test_hostile_input.py:
real links, FIFOs and sockets in a local run's folder and in the download folder. ``outputs`` lists a
run without following a link out of it or opening what is not a regular file (one line each), and
``outputs --download`` writes only through the one writer: never through a link, never outside DIR,
never hanging, modes kept, one download per folder at a time."""

from __future__ import annotations

import json
import os
import socket
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from cloudtrain import statefiles
from cloudtrain.backends.files import Locked
from cloudtrain.cli import main
from tests.fakes.events import local_run

PARTIAL = ".cloudtrain-partial"


@pytest.fixture
def run(tmp_path, monkeypatch) -> Path:
    """A finished local run ``demo-1`` (in history) holding a model file; its run folder."""
    statefiles._warned.clear()
    monkeypatch.chdir(tmp_path)
    folder = local_run(tmp_path / "runs", "demo-1")
    (folder / "model" / "saved_model.pb").write_bytes(b"model" * 100)
    return folder


def _secret(folder: Path) -> Path:
    secret = folder.parent.parent / "credentials"
    secret.write_text("aws_secret_access_key = hunter2\n")
    return secret


def _socket(path: Path) -> None:
    """A socket file at ``path``: bound at a short name (AF_UNIX paths are at most 107 bytes, and pytest's
    folders under xdist are longer), then moved into place; it stays a socket."""
    sock = socket.socket(socket.AF_UNIX)
    short = Path(tempfile.mkdtemp(prefix="s", dir="/tmp")) / "s"
    sock.bind(str(short))  # left bound: the file stays a socket for the test's life
    os.rename(short, path)
    short.parent.rmdir()
    _SOCKETS.append(sock)


_SOCKETS: list[socket.socket] = []


def _relative_link(target: Path, link: Path) -> None:
    os.symlink(os.path.relpath(target, link.parent), link)


# (what is put in the run folder, the one line `outputs` must print about it)
IN_THE_RUN: dict[str, tuple[Callable[[Path], None], str]] = {
    "a link to a file outside the run": (
        lambda f: os.symlink(_secret(f), f / "model" / "creds"),
        "model/creds is a link to {tmp}/credentials, outside {run}: not read",
    ),
    "a relative link climbing out": (
        lambda f: _relative_link(_secret(f), f / "model" / "up"),
        "model/up is a link to {tmp}/credentials, outside {run}: not read",
    ),
    "a link to /etc/passwd": (lambda f: os.symlink("/etc/passwd", f / "passwd"), "passwd is a link to /etc/passwd"),
    "a linked folder": (
        lambda f: os.symlink(f.parent.parent, f / "model" / "all"),
        "model/all is a link to a folder: not followed",
    ),
    "a dangling link": (lambda f: os.symlink(f / "nowhere", f / "dangling"), "which does not exist: not read"),
    "a FIFO": (lambda f: os.mkfifo(f / "model" / "pipe"), "model/pipe is a FIFO: skipped"),
    "a socket": (lambda f: _socket(f / "sock"), "sock is a socket: skipped"),
    "a link to /dev/zero": (lambda f: os.symlink("/dev/zero", f / "zero"), "zero is a link to /dev/zero"),
}


@pytest.mark.timeout(60)  # today's hang: a FIFO in the run folder blocks the download for ever
@pytest.mark.parametrize("put, said", IN_THE_RUN.values(), ids=IN_THE_RUN.keys())
def test_outputs_list_and_download_leave_out_what_is_no_file_of_the_run(put, said, run, tmp_path, capsys) -> None:
    put(run)
    said = said.format(tmp=tmp_path, run=run)
    assert main(["outputs", "demo-1", "-o", "json"]) == 0
    out, err = capsys.readouterr()
    listed = json.loads(out)
    assert [f["path"] for f in listed["files"]] == ["local-run/status.json", "model/saved_model.pb"]
    assert [line for line in err.splitlines() if said in line] and len(err.splitlines()) == 1, err
    assert listed["not_listed"] == [f"{run}: {err.splitlines()[0].split(': ', 2)[2]}"]

    dest = tmp_path / "dl"
    assert main(["outputs", "demo-1", "--download", str(dest)]) == 0
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if not p.is_dir())
    assert got == ["local-run/status.json", "model/saved_model.pb"]  # no lock or partial file left either
    assert (dest / "model" / "saved_model.pb").read_bytes() == b"model" * 100


def _partial(how: str) -> Callable[[Path, Path], None]:
    """Put a link, a FIFO, a socket or a folder where the model's partial file goes; ``outside`` is a
    file outside DIR that must stay as it is."""

    def setup(dest: Path, outside: Path) -> None:
        path = dest / "model" / f"saved_model.pb{PARTIAL}"
        path.parent.mkdir(parents=True)
        if how == "link":
            os.symlink(outside, path)
        elif how == "dangling link":
            os.symlink(dest.parent / "created-through-link", path)
        elif how == "fifo":
            os.mkfifo(path)
        elif how == "socket":
            _socket(path)
        elif how == "folder":
            path.mkdir()
        elif how == "linked parent":
            path.parent.rmdir()
            os.symlink(outside.parent, path.parent)

    return setup


IN_THE_DOWNLOAD = {
    "partial file a link out of DIR": (_partial("link"), "saved_model.pb.cloudtrain-partial is a link"),
    "partial file a dangling link": (_partial("dangling link"), "saved_model.pb.cloudtrain-partial is a link"),
    "partial file a FIFO": (_partial("fifo"), "saved_model.pb.cloudtrain-partial is a FIFO"),
    "partial file a socket": (_partial("socket"), "saved_model.pb.cloudtrain-partial is a socket"),
    "partial file a folder": (_partial("folder"), "saved_model.pb.cloudtrain-partial is a folder"),
    "a folder of DIR a link out of it": (_partial("linked parent"), "dl/model is a link: not written through"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("put, said", IN_THE_DOWNLOAD.values(), ids=IN_THE_DOWNLOAD.keys())
def test_a_download_never_writes_through_what_is_in_the_partial_files_place(put, said, run, tmp_path, capsys) -> None:
    dest, outside = tmp_path / "dl", tmp_path / "elsewhere" / "precious"
    outside.parent.mkdir()
    outside.write_bytes(b"precious")
    put(dest, outside)
    assert main(["outputs", "demo-1", "--download", str(dest)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("fetching ")]
    assert len(err) == 1 and err[0].startswith("error: ") and said in err[0], err
    assert outside.read_bytes() == b"precious" and sorted(os.listdir(outside.parent)) == ["precious"]
    assert not (tmp_path / "created-through-link").exists()


def test_a_download_keeps_each_files_mode(run, tmp_path) -> None:
    os.chmod(run / "model" / "saved_model.pb", 0o600)
    (run / "model" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(run / "model" / "run.sh", 0o750)
    dest = tmp_path / "dl"
    assert main(["outputs", "demo-1", "--download", str(dest)]) == 0
    assert stat.S_IMODE((dest / "model" / "saved_model.pb").stat().st_mode) == 0o600
    assert stat.S_IMODE((dest / "model" / "run.sh").stat().st_mode) == 0o750


def test_a_second_download_into_the_same_folder_is_one_line(run, tmp_path, capsys) -> None:
    dest = tmp_path / "dl"
    with Locked(dest):  # the first download, still running
        assert main(["outputs", "demo-1", "--download", str(dest)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: another download into {dest} is running — wait for it, or pick another folder"]
    assert not (dest / "model").exists()
    assert main(["outputs", "demo-1", "--download", str(dest)]) == 0  # once the first is done


def test_a_partial_download_resumes_through_the_one_writer(run, tmp_path) -> None:
    dest = tmp_path / "dl"
    (dest / "model").mkdir(parents=True)
    (dest / "model" / f"saved_model.pb{PARTIAL}").write_bytes(b"model" * 40)  # 200 of 500 bytes
    assert main(["outputs", "demo-1", "--download", str(dest), "-o", "json"]) == 0
    assert (dest / "model" / "saved_model.pb").read_bytes() == b"model" * 100
    assert not (dest / "model" / f"saved_model.pb{PARTIAL}").exists()
