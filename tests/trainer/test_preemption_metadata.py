"""A Vertex CPU VM's preemption with the real trainer: the metadata server's ``instance/preempted``
turns TRUE, TensorFlow's handler does nothing there (a GCE VM without GPUs), so the trainer's own
save path (trainer/preemption.py) saves at a step, exits 5, and the restart continues at that step.

The metadata server is a fake on 127.0.0.1 (``GCE_METADATA_IP``, which TensorFlow's own GCE
helpers read too): it answers ``instance/hostname``, so both see a GCE VM.
"""

from __future__ import annotations

import http.server
import threading

import pytest

from tests.trainer.helpers import Run, finish, start
from trainer import preemption
from trainer.checkpoint import complete_checkpoints
from trainer.events import parse_events

pytestmark = [pytest.mark.slow, pytest.mark.tf]

EPOCHS, STEPS = 8, 20  # one-step calls so the notice lands mid-epoch; 7 epochs left outlast the watcher's 1 s poll
ARGS = ["--epochs", str(EPOCHS), "--steps-per-epoch", str(STEPS), "--steps-per-execution", "1", "--seed", "7"]


class _Metadata(http.server.BaseHTTPRequestHandler):
    preempted = "FALSE"

    def do_GET(self):
        body = {
            "/computeMetadata/v1/instance/preempted": type(self).preempted,
            "/computeMetadata/v1/instance/hostname": "vm.c.project.internal",
        }.get(self.path)
        ok = body is not None and self.headers.get("Metadata-Flavor") == "Google"
        self.send_response(200 if ok else 404)
        self.send_header("Metadata-Flavor", "Google")
        self.end_headers()
        self.wfile.write((body or "").encode() if ok else b"")

    def log_message(self, *args):
        pass


@pytest.fixture
def metadata():
    handler = type("Metadata", (_Metadata,), {"preempted": "FALSE"})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield handler, f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_cpu_vm_preempted_through_the_metadata_server_saves_and_resumes_at_that_step(tmp_path, metadata):
    handler, host = metadata
    job = ["--job-dir", str(tmp_path / "run")]
    proc = start([*ARGS, *job], cwd=tmp_path, GCE_METADATA_IP=host)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:  # training runs: the platform reclaims the spot VM
        lines.append(line)
        if line.startswith('{"event": "epoch", "epoch": 1,'):
            handler.preempted = "TRUE"
            break
    run = finish(proc, timeout=300)
    out = "".join(lines) + run.stdout
    cut = Run(run.returncode, out, run.stderr, parse_events(out))
    assert cut.returncode == preemption.PREEMPTED_EXIT_CODE, cut.stderr[-3000:]
    saved = cut.one("preempted")
    step = saved["step"]
    assert saved["notice"] == "metadata instance/preempted"
    assert STEPS <= step < EPOCHS * STEPS and saved["checkpoint"].endswith(f"ckpt-{step}/ckpt")
    assert complete_checkpoints(str(tmp_path / "run" / "checkpoints"))[-1][0] == step
    assert not cut.of("done")

    handler.preempted = "FALSE"  # the restarted VM
    resumed = finish(start([*ARGS, *job], cwd=tmp_path, GCE_METADATA_IP=host), timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.one("plan")["resume_step"] == step
    assert [e["epoch"] for e in resumed.of("epoch")] == list(range(step // STEPS + 1, EPOCHS + 1))
    assert resumed.one("done")["steps"] == EPOCHS * STEPS
