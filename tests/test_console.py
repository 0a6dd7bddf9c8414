"""How the CLI shows trainer events and end-of-run details."""

from __future__ import annotations

import datetime as dt
import io
import json

from cloudtrain.backends.base import LogLine
from cloudtrain.console import ReplicaPrinter, format_event, make_console, summary_rows


def test_epoch_event_becomes_one_readable_line():
    line = json.dumps(
        {
            "event": "epoch",
            "epoch": 3,
            "epochs": 8,
            "loss": 0.26102,
            "accuracy": 0.9219,
            "val_accuracy": 0.96379,
            "examples_per_sec": 3280.03,
            "epoch_time_s": 0.7379,
        }
    )
    assert format_event(line) == (
        "epoch 3/8  loss 0.261  accuracy 0.9219  val_accuracy 0.9638  3,280 examples/s  0.7379 s"
    )


def test_benchmark_and_worker_events():
    line = json.dumps(
        {
            "event": "benchmark",
            "model": "resnet50",
            "strategy": "mirrored",
            "replicas": 4,
            "precision": "mixed_float16",
            "global_batch": 256,
            "examples_per_sec": 2811.4,
            "step_time_ms": 91.06,
        }
    )
    assert format_event(line) == (
        "benchmark: resnet50 mirrored × 4 replicas, mixed_float16, global batch 256: 2,811 examples/s, 91.06 ms/step"
    )
    assert format_event('{"event": "worker_done", "task": "worker-1"}') == "done (worker-1)"


def test_plan_event_is_hidden_and_other_lines_pass_through():
    assert format_event('{"event": "plan", "replicas": 2}') is None
    assert format_event("plain text {not json}") == "plain text {not json}"
    assert format_event('{"event": broken') == '{"event": broken'


def test_printer_prefixes_each_replica():
    out = io.StringIO()
    printer = ReplicaPrinter(make_console(out))
    now = dt.datetime.now(dt.timezone.utc)
    printer(LogLine(now, "chief", "hello"))
    printer(LogLine(now, "worker-0", '{"event": "plan"}'))
    printer(LogLine(now, "worker-0", "world"))
    assert out.getvalue().splitlines() == ["chief    | hello", "worker-0 | world"]


def test_summary_flattens_metrics_and_hides_internals():
    rows = dict(
        summary_rows(
            {
                "wall_time_s": 29.7791,
                "metrics": {"val_accuracy": 0.98607},
                "contract": "vertex",
                "environment": "/x",
                "warnings": ["a", "b"],
            }
        )
    )
    assert rows == {"wall time": "29.8 s", "metrics.val_accuracy": "0.9861", "warnings": "a; b"}


def test_fields_for_people_have_words_units_and_counts():
    """Every field as people read it (status, the summary): ``-o json`` keeps the machine names and values."""
    from cloudtrain.console import flatten

    rows = dict(
        flatten(
            {
                "uploads_outputs": False,
                "environment_cached": True,
                "replicas": ["chief"],
                "wall_time_s": 17.71234,
                "environment_setup_s": 0.1734,
                "exit_codes": {"chief": 0, "worker-0": 3},
                "metrics": {"val_accuracy": 0.981234567, "epoch": 12},
                "created": "2026-12-01T09:05:03.123456+01:00",
                "cost": {"usd": 0.123456, "basis": "list price"},
                "took_s": 3725.0,
            }
        )
    )
    assert rows == {
        "uploads outputs": "no",
        "environment cached": "yes",
        "replicas": "1 (chief)",
        "wall time": "17.7 s",
        "environment setup": "0.173 s",
        "exit codes": "chief 0, worker-0 3",
        "metrics.val_accuracy": "0.9812",
        "metrics.epoch": 12,
        "created": "2026-12-01 08:05:03 UTC",
        "cost USD": "0.1235",
        "cost basis": "list price",
        "took": "1 h 2 min",
    }
    assert dict(flatten({"replicas": ["chief", "worker-0", "worker-1"]}))["replicas"] == "3 (chief, worker-0, worker-1)"


def test_plain_console_takes_markup_out_and_keeps_escaped_brackets():
    from cloudtrain.console import PlainConsole, escape

    out = io.StringIO()
    console = PlainConsole(out)
    console.print("[bold]Job[/bold] 7 [yellow]started[/yellow] [INFO]")
    console.print("mapped: " + escape("[bold] is text here"))
    console.print_json(data={"a": [1]})
    assert out.getvalue().splitlines()[:2] == ["Job 7 started [INFO]", "mapped: [bold] is text here"]
    assert json.loads("\n".join(out.getvalue().splitlines()[2:])) == {"a": [1]}
    assert make_console(io.StringIO()).is_terminal is False


def test_a_piped_dry_run_imports_no_rich_and_leaves_pydantic_plugins_as_they_were():
    import subprocess
    import sys

    from tests.conftest import REPO

    code = (
        "import os, sys; from cloudtrain.cli import main; rc = main(sys.argv[1:]);"
        "print(sorted(m for m in sys.modules if m.startswith('rich'))[:3], "
        "os.environ.get('PYDANTIC_DISABLE_PLUGINS'), file=sys.stderr); sys.exit(rc)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "submit", "job_configs/gpu4.yaml", "--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1] == "[] None"
