"""An environment build tells its phases as they run: one line per phase with its size and time
(piped), a live line with the elapsed time and the size so far (a terminal)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from cloudtrain.backends.runner import build_steps, venv

from .conftest import bare_image

UV = Path(__file__).resolve().parents[3] / ".tools" / "bin" / "uv"
SIZE = r"[\d.]+ (?:bytes|KiB|MiB|GiB)"
TIME = r"[\d.]+ s"


def _uv() -> str | None:
    return venv.find_uv() or (str(UV) if UV.exists() else None)


def test_an_image_and_package_build_log_each_phase_with_size_and_time(fake_package, tmp_path):
    lines: list[str] = []
    env = venv.ensure_env(fake_package, bare_image(), root=tmp_path, uv=_uv(), log=lines.append)
    assert not env.cached
    assert lines[0].startswith("building the local image environment once")
    assert re.fullmatch(rf"image environment: creating a Python 3\.\d+ virtual environment: {SIZE} in {TIME}", lines[1])
    install = lines[2:-1]
    if _uv():  # from uv's cache (nothing to download), or downloaded then installed
        assert re.fullmatch(
            rf"image environment: installed \d+ packages( from uv's cache)?, {SIZE}, in {TIME}", install[-1]
        )
        assert all(re.fullmatch(rf"image environment: downloaded \d+ packages? in {TIME}", x) for x in install[:-1])
    else:
        assert re.fullmatch(rf"image environment: downloading and installing .*: .* in {TIME}", install[-1])
    assert re.fullmatch(
        rf"package environment: installing {re.escape(fake_package.name)} .*: {SIZE} in {TIME}", lines[-1]
    )
    # the size is the environment's own (before its marker file was written)
    size = re.search(r"([\d.]+) (KiB|MiB)", lines[-1])
    assert size is not None, lines[-1]
    value, unit = size.groups()
    said = float(value) * {"KiB": 2**10, "MiB": 2**20}[unit]
    marker = (env.path / venv.MARKER).stat().st_size
    assert abs(said - (build_steps.folder_bytes(env.path) - marker)) <= 0.001 * said
    again: list[str] = []
    venv.ensure_env(fake_package, bare_image(), root=tmp_path, uv=_uv(), log=again.append)
    assert again == []  # a cached environment says nothing


def test_uv_step_lines_are_read_as_uv_prints_them():
    assert build_steps.uv_steps(
        "Resolved 45 packages in 3ms\nPrepared 14 packages in 1m 35s\nInstalled 45 packages in 2.31s\n"
    ) == {"resolved": (45, 0.003), "prepared": (14, 95.0), "installed": (45, 2.31)}
    assert (
        build_steps.pip_downloaded_bytes(
            "  Downloading tensorflow-2.18.0-cp310-cp310-manylinux.whl (615.3 MB)\n"
            "  Downloading wheel-0.45.1-py3-none-any.whl (72 kB)\n"
        )
        == 615_372_000
    )


CHILD = """
import sys, pathlib
from cloudtrain.backends.runner import build_steps
folder = pathlib.Path(sys.argv[1])
with build_steps.phase("image environment: downloading", print, folder=folder, live=True):
    (folder / "part.whl").write_bytes(b"x" * 3 * 2**20)
    sys.stdin.readline()  # the test says when to end, once it has seen the line move
"""


def test_on_a_terminal_a_live_line_shows_elapsed_time_and_size(tmp_path):
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)], stdin=subprocess.PIPE, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    assert proc.stdin is not None
    seen = b""
    try:
        while b"3 MiB" not in seen or b" s \xc2\xb7" not in seen:  # "… · 1 s · 3 MiB", drawn after a second
            chunk = os.read(master, 4096)
            if not chunk:
                break
            seen += chunk
        proc.stdin.write(b"\n")
        proc.stdin.close()
        while chunk := _read(master):
            seen += chunk
    finally:
        proc.wait(timeout=30)
        os.close(master)
    text = seen.decode("utf-8", "replace")
    assert re.search(r"image environment: downloading · [\d.]+ s · 3 MiB", text)
    assert "image environment: downloading: 3 MiB in " in text  # and its line when it ends


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # EIO: the other end closed
        return b""
