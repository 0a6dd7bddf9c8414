"""The end of a multi-worker run: the workers leave together, the chief last.

Under ``MultiWorkerMirroredStrategy`` the chief (rank 0) hosts TensorFlow's coordination
service, and each worker's strategy pings its peers from a health-check thread. A worker
that simply returns when its own work is done leaves the others to find it gone: a peer's
ping or the coordination agent's error poll then fails, and the logs end in
``Coordination … UNAVAILABLE`` / ``StartAbort`` lines although the run succeeded. So at the
end every worker

1. stops its strategy's health checks (nothing pings a peer that is leaving),
2. waits at one barrier of the coordination service until every worker has arrived
   (a collective all-reduce where that barrier is not available), and
3. leaves; the chief, which hosts the service, waits :data:`CHIEF_GRACE_S` more so that
   the service outlives the others' disconnects.

A barrier that fails (a worker died) is one warning line, never a failed run.
"""

from __future__ import annotations

import sys
import time

BARRIER_ID = "cloudtrain_end_of_run"
TIMEOUT_S = 300  # the slowest worker's export and metrics writing
CHIEF_GRACE_S = 2.0


def leave_together(strategy, cluster, *, timeout_s: float = TIMEOUT_S, sleep=time.sleep) -> bool:
    """Meet every worker at the end; True when the barrier held (always True for one worker)."""
    if not cluster.is_multi_worker:
        return True
    stop = getattr(getattr(strategy, "extended", None), "_stop_check_health_thread", None)
    if callable(stop):
        stop()
    try:
        _barrier(strategy, timeout_s)
    except Exception as exc:  # noqa: BLE001 — the run itself is done; say so and leave
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"WARNING: workers did not all reach the end-of-run barrier: {first}", file=sys.stderr, flush=True)
        return False
    if cluster.is_chief:
        sleep(CHIEF_GRACE_S)
    return True


def _barrier(strategy, timeout_s: float) -> None:
    from tensorflow.python.eager import context

    ctx = context.context()
    wait = getattr(ctx, "wait_at_barrier", None)
    if ctx.coordination_service is not None and callable(wait):
        wait(BARRIER_ID, int(timeout_s * 1000))
        return
    import tensorflow as tf  # no coordination service: an all-reduce every worker must join

    strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
