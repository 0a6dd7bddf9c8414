"""The end of a multi-worker run: the workers leave together, the chief last.

Under ``MultiWorkerMirroredStrategy`` the chief (rank 0) hosts TensorFlow's coordination
service; every worker's coordination agent sends it a heartbeat every few seconds, and the
service marks a worker whose heartbeats stop for ``heartbeat_timeout`` (10 s by default) as
failed. TensorFlow does not disconnect an agent when the process ends (no Python API shuts it
down, and the eager context is not destroyed at exit: on TF 2.17 the agent's "initiated
Shutdown()" line never appears), so the end of a run is a race:

- a worker that is still up when the chief (and with it the service) is gone finds its next
  heartbeat ``UNAVAILABLE``;
- a chief that is still up ``heartbeat_timeout`` after another worker's last heartbeat logs
  ``… heartbeat timeout``, ``Coordination agent is set to ERROR`` and ``StartAbort`` — the
  run succeeded, the log says otherwise. A slow interpreter exit (seconds on a loaded
  machine) was enough for that in 1 of 40 runs with a fixed grace period.

So at the end every worker

1. stops its strategy's health checks (nothing pings a peer that is leaving),
2. waits at one barrier of the coordination service until every worker has arrived
   (a collective all-reduce where that barrier is not available),
3. non-chief workers then end their process at once (:func:`end_process`: no interpreter
   teardown during which they could outlive the service); the chief waits until every other
   worker's server port stops answering — their processes are gone — and only then ends its
   own, so it leaves well inside the heartbeat timeout and never before the others.

A barrier that fails (a worker died) is one warning line, never a failed run.
"""

from __future__ import annotations

import atexit
import os
import socket
import sys
import time
from collections.abc import Callable, Iterable

BARRIER_ID = "cloudtrain_end_of_run"
TIMEOUT_S = 300  # the slowest worker's export and metrics writing
PEERS_GONE_TIMEOUT_S = 30.0  # the chief stops waiting for the others' exit after this
POLL_S = 0.05


def leave_together(
    strategy,
    cluster,
    *,
    timeout_s: float = TIMEOUT_S,
    peer_alive: Callable[[str], bool] | None = None,
    clock=time.monotonic,
    sleep=time.sleep,
) -> bool:
    """Meet every worker at the end; True when the barrier held (always True for one worker).

    The chief returns only once the other workers' processes are gone (or after
    :data:`PEERS_GONE_TIMEOUT_S`); the caller then ends the process with :func:`end_process`.
    """
    if not cluster.is_multi_worker:
        return True
    stop = getattr(getattr(strategy, "extended", None), "_stop_check_health_thread", None)
    if callable(stop):
        stop()
    try:
        _barrier(strategy, timeout_s)
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"WARNING: workers did not all reach the end-of-run barrier: {first}", file=sys.stderr, flush=True)
        return False
    if cluster.is_chief:
        others = [w for rank, w in enumerate(cluster.workers) if rank != cluster.rank]
        wait_until_gone(others, peer_alive or port_open, PEERS_GONE_TIMEOUT_S, clock=clock, sleep=sleep)
    return True


def wait_until_gone(
    addresses: Iterable[str], alive: Callable[[str], bool], timeout_s: float, *, clock=time.monotonic, sleep=time.sleep
) -> list[str]:
    """Poll until no address answers; returns those still answering when ``timeout_s`` ran out."""
    waiting = list(addresses)
    deadline = clock() + timeout_s
    while waiting:
        waiting = [a for a in waiting if alive(a)]
        if not waiting or clock() >= deadline:
            break
        sleep(POLL_S)
    return waiting


def port_open(address: str, timeout_s: float = 1.0) -> bool:
    """Whether ``host:port`` accepts a TCP connection: a worker's TensorFlow server listens on
    its TF_CONFIG address for as long as its process lives. Refused, unreachable or silent all
    mean gone (a live process's kernel answers at once, however busy the process is)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            return True
    except (OSError, ValueError):
        return False


def end_process(code: int) -> None:
    """Run the exit hooks, flush what this process printed and end it now, skipping the rest of
    the interpreter's teardown.

    Only once every output is written and closed: after a multi-worker run, where TensorFlow's
    teardown of a distributed context takes seconds on a loaded machine, time in which this
    worker could outlive the coordination service or the chief outlive the others' heartbeats;
    and after a preemption checkpoint (trainer/preemption.py), where the peers are leaving too.
    The ``atexit`` hooks still run: they are quick, and one of them removes the modules
    TensorFlow's autograph wrote to the temp folder (about 15 files a run, left behind otherwise).
    """
    try:
        atexit._run_exitfuncs()
    except Exception:
        pass
    for stream in (sys.stdout, sys.stderr):  # logging's own hook has flushed its handlers
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _barrier(strategy, timeout_s: float) -> None:
    from tensorflow.python.eager import context

    ctx = context.context()
    wait = getattr(ctx, "wait_at_barrier", None)
    if ctx.coordination_service is not None and callable(wait):
        wait(BARRIER_ID, int(timeout_s * 1000))
        return
    import tensorflow as tf  # no coordination service: an all-reduce every worker must join

    strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
