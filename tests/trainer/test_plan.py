"""Global batch, learning-rate scaling, steps per epoch, the LR schedule and the plan block."""

from __future__ import annotations

import itertools

import pytest

from trainer import schedule
from trainer.errors import TrainerError
from trainer.plan import plan_batches, render_plan


def test_global_batch_grows_with_replicas_and_per_replica_batch_stays():
    one = plan_batches(64, 1, 0.001, 60_000)
    four = plan_batches(64, 4, 0.001, 60_000)
    assert (one.global_batch, four.global_batch) == (64, 256)
    assert four.per_replica_batch == 64
    assert (one.steps_per_epoch, four.steps_per_epoch) == (937, 234)


def test_learning_rate_scales_linearly_unless_disabled():
    assert plan_batches(64, 8, 0.001, 10_000).lr == pytest.approx(0.008)
    assert plan_batches(64, 8, 0.001, 10_000).lr_scaled
    off = plan_batches(64, 8, 0.001, 10_000, scale_lr=False)
    assert off.lr == 0.001 and not off.lr_scaled
    assert not plan_batches(64, 1, 0.001, 10_000).lr_scaled


def test_steps_cap():
    assert plan_batches(32, 2, 0.01, 1438, max_steps_per_epoch=5).steps_per_epoch == 5
    assert plan_batches(32, 2, 0.01, 1438, max_steps_per_epoch=500).steps_per_epoch == 22


@pytest.mark.parametrize(
    "args, message",
    [
        ((64, 4, 0.001, 100), "fewer than one global batch of 256"),
        ((0, 1, 0.001, 100), "--batch-size must be >= 1"),
        ((8, 1, 0.0, 100), "--lr must be > 0"),
    ],
)
def test_impossible_batches_are_errors(args, message):
    with pytest.raises(TrainerError, match=message):
        plan_batches(*args)


def test_step_schedule_is_the_tutorials_decay():
    # The source tutorial: 1e-3 for epochs 0-2, 1e-4 for 3-6, 1e-5 from 7 (0-based) of 12.
    rates = [schedule.learning_rate(e, 12, 1e-3, "step") for e in range(1, 13)]
    assert rates == pytest.approx([1e-3] * 3 + [1e-4] * 4 + [1e-5] * 5)


def test_cosine_schedule_starts_at_peak_and_ends_at_one_percent():
    rates = [schedule.learning_rate(e, 10, 0.1, "cosine") for e in range(1, 11)]
    assert rates[0] == pytest.approx(0.1) and rates[-1] == pytest.approx(0.001)
    assert all(a > b for a, b in itertools.pairwise(rates))


def test_warmup_ramps_up_to_the_peak():
    rates = [schedule.learning_rate(e, 10, 0.8, "constant", warmup_epochs=3) for e in range(1, 6)]
    assert rates == pytest.approx([0.2, 0.4, 0.6, 0.8, 0.8])


def test_unknown_schedule_is_an_error():
    with pytest.raises(TrainerError):
        schedule.learning_rate(1, 5, 0.1, "exp")


def test_plan_block_shows_what_the_user_needs_to_check():
    plan = {
        "platform": "vertex",
        "job_id": "42",
        "task": "chief:0",
        "workers": 2,
        "devices": ["GPU:0  Tesla T4  compute capability 7.5", "GPU:1  Tesla T4  compute capability 7.5"],
        "strategy": "multi_worker_mirrored",
        "strategy_reason": "2 workers in TF_CONFIG",
        "precision": "mixed_float16",
        "precision_reason": "GPU cc 7.5 >= 7.0",
        "batch": plan_batches(64, 4, 0.001, 60_000).as_dict(),
        "lr_schedule": "cosine",
        "warmup_epochs": 1,
        "data": {
            "name": "mnist",
            "source": "keras.datasets.mnist",
            "train_examples": 60000,
            "val_examples": 10000,
            "input_shape": [28, 28, 1],
            "num_classes": 10,
        },
        "model": "cnn",
        "params": 1234,
        "epochs": 5,
        "dirs": {"model_dir": "gs://b/model"},
        "dirs_origin": {"model_dir": "AIP_MODEL_DIR"},
        "resume_epoch": 3,
    }
    text = render_plan(plan)
    for expected in (
        "compute capability 7.5",
        "multi_worker_mirrored",
        "replicas in sync  4",
        "mixed_float16",
        "64 per replica x 4 = 256 global",
        "0.004 = 0.001 x 4 replicas",
        "train 60000, validation 10000",
        "5 x 234 steps",
        "gs://b/model  (AIP_MODEL_DIR)",
        "from epoch 3",
    ):
        assert expected in text


def test_plan_block_says_when_a_resumed_run_has_nothing_left_to_train():
    plan = {
        "platform": "local",
        "task": "worker:0",
        "workers": 1,
        "devices": ["CPU:0"],
        "strategy": "default",
        "strategy_reason": "no GPU",
        "precision": "float32",
        "precision_reason": "CPU",
        "batch": plan_batches(32, 1, 0.003, 1438).as_dict(),
        "lr_schedule": "cosine",
        "warmup_epochs": 0,
        "data": {
            "name": "digits",
            "source": "sklearn",
            "train_examples": 1438,
            "val_examples": 359,
            "input_shape": [8, 8, 1],
            "num_classes": 10,
        },
        "model": "cnn",
        "epochs": 12,
        "dirs": {},
        "dirs_origin": {},
        "resume_epoch": 12,
    }
    assert "from epoch 12 checkpoint (finished: nothing to train" in render_plan(plan)
    assert "finished" not in render_plan(plan | {"resume_epoch": 5})


def test_plan_block_says_where_a_run_saved_on_notice_resumes_and_what_a_notice_does():
    plan = {
        "platform": "sagemaker",
        "task": "worker:0",
        "workers": 1,
        "devices": ["CPU:0"],
        "strategy": "default",
        "strategy_reason": "no GPU",
        "precision": "float32",
        "precision_reason": "CPU",
        "batch": plan_batches(32, 1, 0.003, 1438).as_dict(),
        "lr_schedule": "cosine",
        "warmup_epochs": 0,
        "data": {
            "name": "digits",
            "source": "sklearn",
            "train_examples": 1438,
            "val_examples": 359,
            "input_shape": [8, 8, 1],
            "num_classes": 10,
        },
        "model": "cnn",
        "epochs": 12,
        "dirs": {},
        "dirs_origin": {},
        "resume_epoch": 2,
        "resume_step": 100,
        "steps_per_execution": "auto (~1 s per call)",
        "preemption": {"notice": "SIGTERM", "grace_period_s": 90, "exit_code": 5},
    }
    text = render_plan(plan)
    assert "from step 100 (epoch 3, step 12 of 44)" in text
    assert "SIGTERM: checkpoint after this call (auto (~1 s per call)), grace 90 s, exit 5" in text
    from trainer.preemption import OFF

    assert "on notice" in render_plan(
        plan | {"preemption": OFF}
    ) and "nothing saved (--no-preemption-handler)" in render_plan(plan | {"preemption": OFF})
