"""Checkpoint on notice: save within about a second of SIGTERM or a preemption notice, then exit 5.

Every platform announces the end the same way: Vertex AI and SageMaker stop the
container with SIGTERM (then SIGKILL), and cloudtrain's ``--local`` runs do the
same on Ctrl-C. On Google Cloud the metadata server's ``instance/preempted``
also turns ``TRUE`` when a spot VM is reclaimed.

TensorFlow's ``tf.distribute.experimental.PreemptionCheckpointHandler`` does the
save: under MultiWorkerMirroredStrategy it agrees on the step at which every
worker saves, so a notice on one worker gives one consistent checkpoint. Its
``TerminationConfig`` is pinned here because the defaults do not fit:

* **watcher**: on Google Cloud the default reads ``instance/maintenance-event``
  (host maintenance), not the preemption flag. Ours returns True once the
  trainer's own SIGTERM handler has fired or ``instance/preempted`` is ``TRUE``.
  (With a watcher, TensorFlow installs no SIGTERM handler of its own, so the
  trainer's flag is the only way SIGTERM reaches it; it also replaces the C++
  preemption notifier that MultiWorkerMirroredStrategy installs, which would
  otherwise swallow SIGTERM.)
* **grace period**: the default on a GCE GPU VM is 3600 s against a 30 s notice.
  Ours: 0 locally (cloudtrain kills after a bounded wait), 20 s on Vertex AI
  (30 s notice), 90 s on SageMaker (120 s between SIGTERM and SIGKILL). With a
  grace period the handler saves at once, trains on, and saves again shortly
  before the period ends.
* **exit**: the default exits 143 (GCE) or 42 (Borg). Ours exits
  :data:`PREEMPTED_EXIT_CODE` (5, "preempted" in cloudtrain's exit-code table),
  after one ``preempted`` event line saying what was saved.

On a GCE *CPU* VM (a Vertex CPU job) the handler does nothing at all, by
TensorFlow's design; there the trainer saves through its own path instead:
after each call, the workers add up their notice flags (one tiny all-reduce)
and, if any is set, all save at the same step and exit 5.

The handler acts only between ``tf.function`` calls, so the loop bounds a call
to about a second (:mod:`trainer.loop`): a notice costs at most that much work.
No TensorFlow is imported at module level.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping

#: cloudtrain.errors.ExitCode.PREEMPTED; the trainer runs without cloudtrain installed.
PREEMPTED_EXIT_CODE = 5
#: Seconds the handler may keep training after a notice, per platform (trainer.env.detect_platform).
GRACE_PERIOD_S = {"local": 0, "vertex": 20, "sagemaker": 90}
#: Overrides the platform's grace period; cloudtrain's local backend sets 0 (it kills after a bounded wait).
GRACE_VAR = "CLOUDTRAIN_PREEMPTION_GRACE_S"
PREEMPTED_PATH = "instance/preempted"
#: The plan's ``preemption`` entry under ``--no-preemption-handler``.
OFF = {"handler": "nothing saved (--no-preemption-handler)"}
_METADATA_HOST_VAR = "GCE_METADATA_IP"  # the variable TensorFlow's own GCE helpers read


def metadata_url(path: str, environ: Mapping[str, str]) -> str:
    host = environ.get(_METADATA_HOST_VAR) or "metadata.google.internal"
    return f"http://{host}/computeMetadata/v1/{path}"


def read_metadata(path: str, environ: Mapping[str, str], timeout: float = 1.0) -> str | None:
    """The value at ``path`` on the GCE metadata server, or None when it cannot be read."""
    request = urllib.request.Request(metadata_url(path, environ), headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read().decode("utf-8", errors="replace").strip()
    except (OSError, ValueError):
        return None


class Notice:
    """Set once by SIGTERM or by ``instance/preempted`` turning TRUE; remembers which and when."""

    def __init__(self, *, watch_metadata: bool = False, environ: Mapping[str, str] | None = None, poll_s: float = 1.0):
        self._event = threading.Event()
        self.source: str | None = None
        self.received_at: float | None = None  # time.time()
        self._environ = dict(os.environ if environ is None else environ)
        self._poll_s = poll_s
        self._stop = threading.Event()
        self.previous_handler = signal.signal(signal.SIGTERM, self._on_sigterm)
        if watch_metadata:
            threading.Thread(target=self._poll_metadata, name="preempted-flag-watcher", daemon=True).start()

    def _on_sigterm(self, signum, frame) -> None:
        self.set("SIGTERM")

    def _poll_metadata(self) -> None:
        while not self._stop.is_set() and not self._event.is_set():
            if read_metadata(PREEMPTED_PATH, self._environ) == "TRUE":
                self.set(f"metadata {PREEMPTED_PATH}")
                return
            self._stop.wait(self._poll_s)

    def set(self, source: str) -> None:
        if not self._event.is_set():
            self.source, self.received_at = source, time.time()
            print(
                f"preemption notice ({source}): saving a checkpoint at the end of this call",
                file=sys.stderr,
                flush=True,
            )
            self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def close(self) -> None:
        self._stop.set()


def watches_metadata(platform: str, environ: Mapping[str, str]) -> bool:
    """Vertex AI runs on GCE VMs; ``GCE_METADATA_IP`` points elsewhere (a test's fake server)."""
    return platform == "vertex" or bool(environ.get(_METADATA_HOST_VAR))


def make_notice(platform: str, environ: Mapping[str, str] | None = None) -> Notice:
    environ = os.environ if environ is None else environ
    return Notice(watch_metadata=watches_metadata(platform, environ), environ=environ)


def is_inert(platform: str, devices, environ: Mapping[str, str] | None = None) -> bool:
    """Whether TensorFlow's handler will do nothing: it ignores GCE VMs without GPUs (CPU and TPU
    VMs), which it recognises by a readable metadata server; mirrored here to save ourselves."""
    environ = os.environ if environ is None else environ
    if any(d.kind == "GPU" for d in devices) or not watches_metadata(platform, environ):
        return False
    return read_metadata("instance/hostname", environ, timeout=5.0) is not None


def grace_period(platform: str, environ: Mapping[str, str] | None = None) -> float:
    environ = os.environ if environ is None else environ
    raw = environ.get(GRACE_VAR, "").strip()
    try:
        return max(float(raw), 0.0) if raw else GRACE_PERIOD_S[platform]
    except ValueError:
        return GRACE_PERIOD_S[platform]


def describe(platform: str) -> dict:
    """The plan's ``preemption`` entry."""
    return {
        "notice": "SIGTERM" + (f", metadata {PREEMPTED_PATH}" if watches_metadata(platform, os.environ) else ""),
        "grace_period_s": grace_period(platform),
        "exit_code": PREEMPTED_EXIT_CODE,
    }


class Preemption:
    """Wraps each training call; saves and exits when any worker got a notice."""

    def __init__(
        self,
        strategy,
        manager,
        notice: Notice,
        *,
        grace_period_s: float,
        on_exit: Callable[[], None],
        inert: bool,
        num_workers: int,
    ):
        import tensorflow as tf

        self._strategy = strategy
        self._manager = manager
        self._notice = notice
        self._on_exit = on_exit
        self._inert = inert
        self._num_workers = num_workers
        self.handler = None
        if not inert:
            config = tf.distribute.experimental.TerminationConfig(
                termination_watcher_fn=notice.is_set, exit_fn=self._exit, grace_period=grace_period_s
            )
            self.handler = tf.distribute.experimental.PreemptionCheckpointHandler(
                getattr(strategy, "cluster_resolver", None), manager, termination_config=config
            )

    def run(self, fn, *args):
        if self.handler is not None:
            return self.handler.run(fn, *args)
        result = fn(*args)
        if self._any_notice():
            self._manager.save()
            self._exit()
        return result

    def _any_notice(self) -> bool:
        """The fallback where TensorFlow's handler is inert: every worker sees every worker's flag."""
        if self._num_workers <= 1:
            return self._notice.is_set()
        import tensorflow as tf

        flag = tf.constant(1.0 if self._notice.is_set() else 0.0)
        return float(self._strategy.reduce("SUM", self._strategy.run(lambda: tf.identity(flag)), axis=None)) > 0

    def _exit(self) -> None:
        from trainer.shutdown import end_process

        self._on_exit()
        # No interpreter teardown: the other workers exit at the same moment, and it would wait
        # on the collective runtime's teardown with peers that are gone.
        end_process(PREEMPTED_EXIT_CODE)

    def close(self) -> None:
        self._notice.close()


class Unguarded:
    """``--no-preemption-handler``: each call runs bare (what the trainer bench compares against)."""

    def run(self, fn, *args):
        return fn(*args)

    def close(self) -> None:
        pass
