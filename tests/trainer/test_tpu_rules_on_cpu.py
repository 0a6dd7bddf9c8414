"""The TPU rules end to end on this CPU, through the same code a TPU run takes, with the default strategy.

``--tpu-rules`` is what ``--strategy tpu`` turns on by itself: bfloat16 by default, the input
through the distributed iterator, full batches only (training and evaluation), a fixed number of
steps per call that divides the epoch. What only a TPU can show (TPUStrategy, XLA on the TPU)
is not tested here: see docs/how-to/tpu.md.
"""

from __future__ import annotations

import pytest

from tests.trainer.helpers import finish, kill, start
from trainer import tpu

pytestmark = [pytest.mark.slow, pytest.mark.tf]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tpu-rules")
    proc = start(["--tpu-rules", "--epochs", "4", "--batch-size", "64"], cwd=out)
    try:
        result = finish(proc)
    finally:
        kill(proc)
    assert result.returncode == 0, result.stderr[-4000:]
    result.dir = out / "trainer_output"
    return result


def test_tpu_rules_set_bfloat16_static_shapes_and_fixed_steps_per_call(run):
    plan = run.one("plan")
    assert (plan["strategy"], plan["precision"], plan["static_shapes"]) == ("default", "mixed_bfloat16", True)
    assert plan["tpu_rules"].startswith("--tpu-rules with the default strategy")
    spe = plan["batch"]["steps_per_epoch"]
    assert plan["batch"]["global_batch"] == 64 * plan["replicas"] == 64
    assert spe == plan["batch"]["train_examples"] // 64
    expected = tpu.rules("tpu").steps_per_execution(None, spe)
    assert plan["steps_per_execution"] == expected and spe % expected == 0
    assert [e["steps"] for e in run.of("epoch")] == [spe] * 4
    assert run.one("done")["val_accuracy"] > 0.5  # it learns under bfloat16, not just runs


def test_the_export_reloads_on_cpu_and_evaluation_saw_full_batches_only(run):
    import keras
    import numpy as np
    import tensorflow as tf

    from trainer.data import load_digits

    model_dir = run.dir / "model"
    val = load_digits(val_split=0.2, seed=0).val
    assert val is not None
    images, labels = (t.numpy() for t in next(iter(val.batch(10_000))))
    full = len(labels) // 64 * 64  # static shapes: the last partial batch is not evaluated
    assert full < len(labels)

    reloaded = keras.saving.load_model(model_dir / "model.keras")
    probs = np.asarray(reloaded.predict(images, verbose=0), dtype=np.float32)
    served = tf.saved_model.load(str(model_dir)).signatures["serving_default"]
    served_probs = next(iter(served(tf.constant(images)).values())).numpy().astype(np.float32)
    np.testing.assert_allclose(served_probs, probs, atol=1e-2)  # bfloat16 compute

    accuracy = float(np.mean(np.argmax(probs[:full], axis=-1) == labels[:full]))
    assert accuracy == pytest.approx(run.one("done")["val_accuracy"], abs=1.01 / full)


def test_static_shapes_make_every_eval_batch_full_and_its_shape_known():
    from trainer.data import eval_pipeline, load_digits

    data = load_digits(val_split=0.2, seed=0)
    assert data.val is not None
    n = sum(int(x.shape[0]) for x, _ in data.val.batch(10_000))
    static = eval_pipeline(data, 64, cache=False, static_shapes=True)
    assert static is not None
    assert [int(x.shape[0]) for x, _ in static] == [64] * (n // 64)
    assert static.element_spec[0].shape[0] == 64  # what XLA compiles once
    dynamic = eval_pipeline(data, 64, cache=False)
    assert dynamic is not None
    assert [int(x.shape[0]) for x, _ in dynamic][-1] == n % 64 and dynamic.element_spec[0].shape[0] is None
