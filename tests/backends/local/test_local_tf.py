"""Real TensorFlow across processes: MultiWorkerMirroredStrategy over the local TF_CONFIG."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend

from .conftest import make_spec

REPO = Path(__file__).resolve().parents[3]

# Two workers sum their ranks through a collective: 0 + 1 = 1 only if they really talk.
MWMS_TASK = """
import json, os
import tensorflow as tf

strategy = tf.distribute.MultiWorkerMirroredStrategy()
resolver = strategy.cluster_resolver
rank = tf.constant(float(resolver.task_id + (1 if resolver.task_type == "worker" and
                   "chief" in resolver.cluster_spec().as_dict() else 0)))
total = strategy.reduce("SUM", strategy.run(lambda: tf.identity(rank)), axis=None)
print(json.dumps({"event": "done", "workers": strategy.num_replicas_in_sync, "rank_sum": float(total),
                  "task": f"{resolver.task_type}:{resolver.task_id}"}))
"""

pytestmark = [pytest.mark.slow, pytest.mark.tf]


@pytest.fixture
def mwms_package(tmp_path):
    from cloudtrain.packaging import build_sdist

    pkg = tmp_path / "mwms"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text(textwrap.dedent(MWMS_TASK))
    return build_sdist(pkg, tmp_path / "dist")


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
def test_two_processes_form_one_multi_worker_cluster(cloud, mwms_package, tf_cache, tf_image, tmp_path):
    spec = make_spec(tmp_path, cloud=cloud, replica_count=2, module="mwms.task")
    backend = LocalBackend(cache_root=tf_cache, gpu_count=lambda: 0, image_for=lambda spec: tf_image)
    job = backend.submit(spec, mwms_package)
    status = job.wait()
    assert status.state is JobState.SUCCEEDED, [line.message for line in job.logs()][-30:]
    done = [json.loads(line.message) for line in job.logs() if line.message.startswith('{"event": "done"')]
    expected = ["chief:0", "worker:0"] if cloud == "vertex" else ["worker:0", "worker:1"]
    assert sorted(d["task"] for d in done) == expected
    assert all(d["workers"] == 2 and d["rank_sum"] == 1.0 for d in done)


@pytest.mark.skipif(not (REPO / "trainer" / "task.py").is_file(), reason="the trainer is not written yet")
def test_the_real_trainer_trains_across_two_replicas(tf_cache, tf_image, tmp_path):
    from cloudtrain.packaging import build_sdist

    package = build_sdist(REPO / "trainer", tmp_path / "dist")
    spec = make_spec(tmp_path, replica_count=2, module="trainer.task", args=("--data=digits", "--epochs=2"))
    job = LocalBackend(cache_root=tf_cache, gpu_count=lambda: 0, image_for=lambda spec: tf_image).submit(spec, package)
    status = job.wait()
    messages = [f"{line.replica}: {line.message}" for line in job.logs()]
    assert status.state is JobState.SUCCEEDED, "\n".join(messages[-40:])
    d = status.details
    assert d["exit_codes"] == {"chief": 0, "worker-0": 0}
    assert d["metrics"]["epochs_run"] == 2 and 0.0 <= d["metrics"]["val_accuracy"] <= 1.0
    assert Path(d["metrics_file"]).is_file()
    assert any(Path(d["checkpoint_dir"]).iterdir())


# `cloudtrain submit --local`'s follow loop with the real trainer as the package; Ctrl-C arrives as SIGINT.
CTRL_C_DRIVER = """
import json, sys, types
from pathlib import Path
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.cli._follow import follow
from cloudtrain.console import make_console
from tests.backends.local.conftest import make_spec

package, cache, tmp = json.loads(sys.argv[1])
spec = make_spec(Path(tmp), replica_count=2, module="trainer.task",
                 args=("--data=digits", "--epochs=50", "--steps-per-epoch=30", "--steps-per-execution=1"))
job = LocalBackend(cache_root=Path(cache), gpu_count=lambda: 0).submit(spec, types.SimpleNamespace(**package))
try:
    follow(make_console(sys.stdout), job, cancel_on_interrupt=True)
except SystemExit as exc:
    sys.exit(exc.code)
except Exception as exc:
    sys.exit(getattr(exc, "exit_code", 99))
"""


def test_ctrl_c_stops_a_two_worker_trainer_run_with_a_checkpoint_and_records_it(shared_cache, tmp_path):
    """First Ctrl-C: SIGTERM to both replicas, which save at one step and exit 5 on their own
    (TF's own preemption notifier no longer swallows it); recorded CANCELLED with what was saved."""
    import signal
    import subprocess
    import sys

    from cloudtrain.packaging import build_sdist

    package = build_sdist(REPO / "trainer", tmp_path / "dist")
    fields: dict[str, object] = {k: str(getattr(package, k)) for k in ("path", "sha256", "name", "version", "filename")}
    fields["requirements"] = list(package.requirements)  # what its requirements layer installs (scikit-learn)
    driver = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_DRIVER, json.dumps([fields, str(shared_cache), str(tmp_path)])],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    assert driver.stdout is not None
    try:
        for line in driver.stdout:
            lines.append(line)
            if "epoch 2/50" in line:  # the follow loop shows epoch lines readably
                driver.send_signal(signal.SIGINT)
                break
        out = driver.communicate(timeout=120)[0]
    finally:
        driver.kill()
    out = "".join(lines) + out
    assert driver.returncode == 130, out[-4000:]
    assert "stopping: saving a checkpoint" in out
    status = json.loads((tmp_path / "out" / "local-run" / "status.json").read_text())
    assert status["state"] == "CANCELLED", status
    d = status["details"]
    assert d["exit_codes"] == {"chief": 5, "worker-0": 5}  # both saved and exited by themselves
    saved = d["saved"]
    # at or after the epoch shown (exactly its last step when the signal lands on the boundary); the trainer
    # caps --steps-per-epoch=30 at one pass over the data (the plan says how many), so not 2 × 30
    planned = re.search(r"epochs\s+50 x (\d+) steps", out)
    assert planned is not None, out[-3000:]
    steps_per_epoch = int(planned.group(1))
    assert saved["source"] == "saved on SIGTERM" and saved["step"] >= 2 * steps_per_epoch
    assert Path(saved["checkpoint"]).parent.is_dir() and f"step {saved['step']}" in status["message"]
    assert d["wall_time_s"] > 1.0 and d["exit_code"] == 130
