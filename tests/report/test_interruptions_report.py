"""The run report shows a run's interruptions: a column in the runs table, a table of its own, the timeline."""

from __future__ import annotations

import datetime as dt

from cloudtrain.reporting import figures, page
from cloudtrain.reporting.collect import RunData

T0 = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.timezone.utc)


def test_interruptions_table_column_and_timeline(tmp_path) -> None:
    iso = lambda s: (T0 + dt.timedelta(seconds=s)).isoformat()  # noqa: E731
    item = {
        "at": iso(130),
        "source": "SageMaker SecondaryStatus Interrupted; notice (SIGTERM)",
        "step": 14,
        "checkpoint_step": 14,
        "resumed_at": iso(330),
        "resume_step": 14,
        "steps_redone": 0,
        "down_s": 200.0,
        "redo_s": 0.0,
        "seconds_lost": 200.0,
        "exact": True,
    }
    run = RunData(
        "spot-job",
        "sagemaker",
        "SUCCEEDED",
        T0,
        T0 + dt.timedelta(seconds=600),
        phases=[{"phase": "training", "seconds": 600.0, "share": 1.0, "cost_usd": None}],
        interruptions={"count": 1, "steps_redone": 0, "seconds_lost": 200.0, "items": [item]},
    )
    assert run.interruption_offsets() == [(130.0, 330.0)]
    drawn = figures.draw_all([run], tmp_path)
    html = page.write([run], drawn, tmp_path).read_text()
    assert '<table id="interruptions-spot-job">' in html
    assert "<td>1; 0 steps redone; 3 min 20 s lost</td>" in html  # the runs table's column
    assert "<td>SageMaker SecondaryStatus Interrupted; notice (SIGTERM)</td><td>14</td><td>14</td><td>0</td>" in html
    assert (tmp_path / "timeline.png").stat().st_size > 0
