"""The one first-line helper every one-line message uses (cloud errors, the CLI's unexpected-error line)."""

from __future__ import annotations

from cloudtrain.text import first_line


def test_the_first_non_blank_line_cut_to_the_limit() -> None:
    assert first_line(RuntimeError("\n  503 Service Unavailable\ntrace: …")) == "503 Service Unavailable"
    assert first_line(RuntimeError("x" * 300), 200) == "x" * 200


def test_an_error_without_text_is_named_by_its_type() -> None:
    assert first_line(TimeoutError()) == "TimeoutError"
    assert first_line("") == ""
