"""TensorBoard event files for tests, written with TensorBoard's own writer (no TensorFlow, no
training), and local runs as ``cloudtrain submit --local`` records them."""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
import types
from collections.abc import Mapping
from pathlib import Path

from cloudtrain import history
from cloudtrain.history import JobRecord


def write_scalars(folder: Path, steps: Mapping[str, list[float]], *, suffix: str = "", first: int = 0) -> Path:
    """One event file in ``folder`` holding each tag's values at steps ``first``, ``first + 1``, …; its path.
    TensorBoard is told TensorFlow is not needed (as ``cloudtrain tensorboard`` tells its server): its stub
    writes the file."""
    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    folder.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(folder), filename_suffix=suffix)
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    for tag, values in steps.items():
        for step, value in enumerate(values, start=first):
            summary = summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag=tag, simple_value=value, metadata=metadata)]
            )
            writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))
    writer.close()
    return Path(writer.get_logdir()) / max(p.name for p in folder.iterdir() if "tfevents" in p.name)


def local_run(root: Path, job_id: str, *, state: str = "succeeded", board: str = "logs") -> Path:
    """A local run's folder as ``submit --local`` leaves it (``local-run/status.json``), in history; its folder."""
    out = root / job_id
    (out / "local-run").mkdir(parents=True, exist_ok=True)
    (out / "model").mkdir(exist_ok=True)
    status = {
        "job_id": job_id,
        "name": str(out),
        "state": state.upper(),
        "native_state": state,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(),
        "ended": dt.datetime.now(dt.timezone.utc).isoformat(),
        "details": {"output_dir": str(out), "tensorboard_dir": str(out / board), "contract": "vertex"},
    }
    (out / "local-run" / "status.json").write_text(json.dumps(status))
    history.record(JobRecord(job_id, str(out), "local", "local"))
    return out
