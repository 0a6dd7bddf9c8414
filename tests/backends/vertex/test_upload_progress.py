"""The upload progress line on a terminal (a package over one 8 MiB chunk): sizes as every other
line prints them (cloudtrain.text.numbers.size: 4 significant digits, the unit that fits)."""

from __future__ import annotations

import io
import sys

import pytest

from cloudtrain.backends.vertex.backend import VertexBackend
from cloudtrain.backends.vertex.upload import CHUNK


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_upload_progress_line_prints_sizes_with_the_one_size_formatter(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    total = 20 * 2**20 + 300 * 2**10  # 20.29 MiB
    show = VertexBackend()._live()._progress(total)
    assert show is not None
    show(CHUNK, total)
    show(total, total)
    assert terminal.getvalue() == ("\ruploading 8 MiB / 20.29 MiB (39%)\ruploading 20.29 MiB / 20.29 MiB (100%)\n")


def test_no_progress_line_off_a_terminal_or_for_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert VertexBackend()._live()._progress(20 * 2**20) is None
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert VertexBackend()._live()._progress(CHUNK) is None
