"""The notice without TensorFlow: SIGTERM and GCE's instance/preempted set it; the per-platform settings."""

from __future__ import annotations

import http.server
import os
import signal
import threading

import pytest

from cloudtrain.errors import ExitCode
from trainer import preemption
from trainer.cli import parse_args


def test_the_preempted_exit_code_is_the_clis():
    assert preemption.PREEMPTED_EXIT_CODE == ExitCode.PREEMPTED  # the trainer runs without cloudtrain


def test_sigterm_sets_the_notice_once_and_says_so(capsys):
    notice = preemption.Notice()
    try:
        assert not notice.is_set()
        os.kill(os.getpid(), signal.SIGTERM)
        assert notice.is_set() and notice.source == "SIGTERM" and notice.received_at
        first = notice.received_at
        os.kill(os.getpid(), signal.SIGTERM)
        assert notice.received_at == first
        assert "preemption notice (SIGTERM)" in capsys.readouterr().err
    finally:
        signal.signal(signal.SIGTERM, notice.previous_handler)


class _Metadata(http.server.BaseHTTPRequestHandler):
    preempted = "FALSE"
    seen: list = []

    def do_GET(self):
        self.seen.append((self.path, self.headers.get("Metadata-Flavor")))
        body = {
            "/computeMetadata/v1/instance/preempted": self.preempted,
            "/computeMetadata/v1/instance/hostname": "vm.c.project.internal",
        }.get(self.path)
        self.send_response(200 if body else 404)
        self.end_headers()
        self.wfile.write((body or "").encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def metadata_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Metadata.preempted, _Metadata.seen = "FALSE", []
    yield {"GCE_METADATA_IP": f"127.0.0.1:{server.server_address[1]}"}
    server.shutdown()


def test_instance_preempted_turning_true_sets_the_notice(metadata_server):
    notice = preemption.Notice(watch_metadata=True, environ=metadata_server, poll_s=0.05)
    try:
        threading.Event().wait(0.3)
        assert not notice.is_set()
        _Metadata.preempted = "TRUE"
        for _ in range(100):
            if notice.is_set():
                break
            threading.Event().wait(0.05)
        assert notice.is_set() and notice.source == "metadata instance/preempted"
        assert ("/computeMetadata/v1/instance/preempted", "Google") in _Metadata.seen
    finally:
        notice.close()
        signal.signal(signal.SIGTERM, notice.previous_handler)


def test_a_gce_vm_without_gpus_gets_the_trainers_own_save(metadata_server):
    """TensorFlow's handler does nothing on GCE CPU VMs (a Vertex CPU job); the trainer notices."""
    from trainer.hardware import Device

    cpu, gpu = [Device("/device:CPU:0", "CPU")], [Device("/device:CPU:0", "CPU"), Device("/device:GPU:0", "GPU")]
    assert preemption.is_inert("vertex", cpu, metadata_server)
    assert not preemption.is_inert("vertex", gpu, metadata_server)
    assert not preemption.is_inert("sagemaker", cpu, {})
    # A spot TPU VM on Vertex: TensorFlow's handler ignores it (no GPU), so the trainer's own notice
    # path (SIGTERM or metadata instance/preempted, then one checkpoint and exit 5) is the one that saves.
    tpu_vm = [Device(f"/job:worker/replica:0/task:0/device:TPU:{i}", "TPU", "TPU core") for i in range(4)]
    assert preemption.is_inert("vertex", tpu_vm, metadata_server)


def test_grace_period_per_platform_and_the_local_override():
    assert preemption.grace_period("local", {}) == 0
    assert preemption.grace_period("vertex", {}) < 30 and preemption.grace_period("sagemaker", {}) < 120
    assert preemption.grace_period("sagemaker", {preemption.GRACE_VAR: "0"}) == 0
    assert preemption.grace_period("vertex", {preemption.GRACE_VAR: "soon"}) == preemption.GRACE_PERIOD_S["vertex"]


def test_steps_per_execution_is_auto_by_default_or_a_number():
    assert parse_args([], {}).steps_per_execution is None
    assert parse_args(["--steps-per-execution", "auto"], {}).steps_per_execution is None
    assert parse_args(["--steps_per_execution=8"], {}).steps_per_execution == 8
    with pytest.raises(SystemExit):
        parse_args(["--steps-per-execution", "0"], {})
