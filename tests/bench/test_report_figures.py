"""No sentence of the report states a figure that is not in the data.

Every number written into the renderer's own strings (bench/report.py, bench/_logs_table.py,
bench/_plot.py) is either in the allow-list below, each entry with why it is not a measured or
configured figure, or it fails this test: a figure of a run comes from that run's results.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bench import report

from .test_report import results  # noqa: F401  (the fixture: a fake results dict)

BENCH = Path(__file__).resolve().parents[2] / "bench"
RENDERERS = ("report.py", "_logs_table.py", "_plot.py")
#: A number as prose writes it: not part of a name (p50, float32, 8x8, eu-west-1, #1f77b4) nor a format (.1f).
FIGURE = re.compile(r"(?<![\w.#\-])\d+(?:[.,]\d+)*(?!\w)")
ALLOWED = {
    r"1/5/15 min": "the load average's own periods: a label",
    r"^(## )?\d\. |section \d": "section numbers",
    r"issue \d+": "issue numbers",
    r"\d → \d GPUs|\d+ s → [\d.]+ s per epoch pair \([\d.]+× faster\)|68 s → 90\.6 s \(1\.33× slower\)"
    r"|45–60 % of float32 time": "the source articles' GPU figures (issue 7), shown as theirs beside this run's",
    r"mirrored \d logical CPUs / \d|\d logical CPU devices / \d|\d step/call": "names of the trainer bench's cases",
    r"exit \d": "the trainer's preemption exit code",
    r"\b0 lost": "the cell for no line lost",
    r"default read quota is 60 ListLogEntries a minute": "Cloud Logging's published default quota",
    r"\(60 s look-back\)|before 79b4f06 \(a 60 s look-back": "the previous follower's design at commit 79b4f06 "
    "(bench/_vertex_baselines.py keeps it)",
    r"Google Cloud SDK 578\.0\.0|l\. \d+(-\d+)?(, \d+(-\d+)?)*|default 60 s|at most 1000 entries|now − 5 s"
    r"|every 10 s": "gcloud's own constants, cited by source file and line",
    r"logs_for_job, 10 s poll|TrainingJob\.wait, 5 s poll": "the SageMaker SDK's own poll intervals "
    "(bench/sagemaker_logs_bench.py cites them)",
    r"in (any )?60 s": "the window of the peak-rate figure (the data's peak_*_in_60s)",
}


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string constant of the module but its docstrings, with its line."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def unexplained_figures(text: str) -> list[str]:
    covered = [m.span() for pattern in ALLOWED for m in re.finditer(pattern, text)]
    return [
        m.group()
        for m in FIGURE.finditer(text)
        if not any(start <= m.start() and m.end() <= end for start, end in covered)
    ]


@pytest.mark.parametrize("name", RENDERERS)
def test_every_figure_written_into_the_renderer_is_explained(name):
    found = [
        f"{name}:{line}: {figure!r} in {text[:80]!r}"
        for line, text in _strings(BENCH / name)
        for figure in unexplained_figures(text)
    ]
    assert found == []


def test_the_check_catches_the_figures_it_was_written_for():
    """The two sentences issue 25 found: a buffer window the code does not use, a time not in the data."""
    assert unexplained_figures("TailLogEntries live view with a 1 s buffer window") == ["1"]
    assert unexplained_figures("all 50 dropped entries, about 17 s") == ["50", "17"]
    assert unexplained_figures("p50 s, float32, eu-west-1, {:,.1f}, #1f77b4, issue 25") == []


def test_the_logs_section_takes_its_counts_and_rate_from_the_data(results):  # noqa: F811
    late = results["benches"]["vertex_late"]["data"]
    late["lines_per_second"] = 2.0
    late["summary"] = [r for r in late["summary"] if r["replicas"] != 60]
    logs = report.render(results).split("## 4. Logs")[1].split("## 5.")[0]
    assert "Vertex at 1/8 replicas, lines arriving late" in logs
    assert "SageMaker at 1/60 instances: " in logs
    assert "Each Vertex replica prints 2 line(s) a second" in logs
    assert "buffer window" in logs and "1 s buffer" not in logs and "17 s" not in logs
