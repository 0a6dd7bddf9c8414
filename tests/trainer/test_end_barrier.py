"""The end-of-run barrier with two real workers (trainer/shutdown.py, docs/explanation/multi_worker_end.md):
no worker leaves before every worker has arrived, and the chief leaves last.

The chief is held :data:`HOLD_S` before it reaches the end (as a slow export would hold it); the
trainer's own end runs unchanged, with every arrival and every pass of the barrier written to a
file by a wrapper around it. A barrier that did nothing would let the other worker pass (and end
its process) seconds before the chief arrived: that is what the test looks for, not a timing.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.trainer.helpers import finish, free_ports, kill, trainer_env

pytestmark = [pytest.mark.slow, pytest.mark.tf]

HOLD_S = 3.0
ARGS = ["--epochs", "1", "--steps-per-epoch", "2", "--data", "synthetic", "--synthetic-examples", "256", "--no-resume"]
#: ``python -m trainer.task`` with the trainer's end observed: times written to MARKS, the chief held first.
_OBSERVED_END = """
import json, sys, time
import trainer.shutdown as s
marks, hold = sys.argv.pop(1), float(sys.argv.pop(1))
def mark(what, cluster):
    with open(marks, "a") as f:
        f.write(json.dumps({{"what": what, "rank": cluster.rank, "at": time.time()}}) + "\\n")
leave, barrier = s.leave_together, s._barrier
def observed_leave(strategy, cluster, **kw):
    if cluster.is_chief:
        time.sleep(hold)
    mark("arrived", cluster)
    def observed_barrier(strategy, timeout_s):
        barrier(strategy, timeout_s)
        mark("passed", cluster)
    s._barrier = observed_barrier
    held = leave(strategy, cluster, **kw)
    mark("left", cluster)
    return held
s.leave_together = observed_leave
from trainer.task import main
sys.exit(main(sys.argv[1:]))
"""


def test_no_worker_passes_the_end_barrier_before_the_held_chief_arrives(tmp_path):
    import subprocess

    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    marks = tmp_path / "marks.jsonl"
    procs = []
    try:
        for index in range(2):
            tf_config = json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        _OBSERVED_END.format(),
                        str(marks),
                        str(HOLD_S),
                        *ARGS,
                        "--job-dir",
                        str(tmp_path / f"w{index}"),
                    ],
                    cwd=tmp_path,
                    env=trainer_env(TF_CONFIG=tf_config),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    start_new_session=True,
                )
            )
        chief, other = [finish(p, timeout=400) for p in procs]
    finally:
        for p in procs:
            kill(p)
    assert chief.returncode == 0, chief.stderr[-4000:]
    assert other.returncode == 0, other.stderr[-4000:]
    at = {(m["what"], m["rank"]): m["at"] for m in map(json.loads, marks.read_text().splitlines())}
    assert set(at) == {(what, rank) for what in ("arrived", "passed", "left") for rank in (0, 1)}, at
    # The other worker arrived first (the chief was held) and waited at the barrier for the chief.
    assert at["arrived", 1] < at["arrived", 0]
    assert at["passed", 1] >= at["arrived", 0], f"worker 1 passed {at['arrived', 0] - at['passed', 1]:.2f} s early"
    # The chief leaves only once the other worker's process is gone (it ends right after it left the barrier).
    assert at["left", 0] >= at["left", 1]
    assert "end-of-run barrier" not in chief.stderr + other.stderr
