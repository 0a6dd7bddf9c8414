"""Precision from device details alone."""

from __future__ import annotations

import pytest

from trainer.errors import TrainerError
from trainer.precision import choose_precision


@pytest.mark.parametrize(
    "ccs, policy",
    [
        ([(6, 1)], "float32"),  # Pascal (P4, P100 is 6.0): no tensor cores
        ([(6, 0), (6, 0)], "float32"),
        ([(7, 0)], "mixed_float16"),  # V100
        ([(7, 5)] * 4, "mixed_float16"),  # T4
        ([(8, 0)], "mixed_float16"),  # A100: provisional choice, see precision.py
        ([(9, 0)] * 8, "mixed_float16"),  # H100
        ([(7, 0), (6, 1)], "float32"),  # the slowest GPU decides
        ([None], "float32"),
    ],
)
def test_auto_on_gpus_follows_the_lowest_compute_capability(ccs, policy):
    p = choose_precision("auto", "gpu", ccs)
    assert p.policy == policy
    assert p.loss_scaling == (policy == "mixed_float16")


def test_cc_8_choice_is_marked_provisional():
    assert "provisional" in choose_precision("auto", "gpu", [(8, 0)]).reason


def test_cpu_auto_is_float32_never_float16():
    p = choose_precision("auto", "cpu")
    assert p.policy == "float32" and not p.loss_scaling


def test_float16_on_cpu_is_refused_even_when_asked():
    with pytest.raises(TrainerError, match="mixed_float16 on a CPU"):
        choose_precision("mixed_float16", "cpu")


def test_bfloat16_on_cpu_is_allowed_on_request():
    p = choose_precision("mixed_bfloat16", "cpu")
    assert p.policy == "mixed_bfloat16" and not p.loss_scaling


def test_tpu_gets_bfloat16_and_refuses_float16():
    assert choose_precision("auto", "tpu").policy == "mixed_bfloat16"
    with pytest.raises(TrainerError, match="TPUs have no float16"):
        choose_precision("mixed_float16", "tpu")


def test_bfloat16_needs_ampere():
    assert choose_precision("mixed_bfloat16", "gpu", [(8, 6)]).policy == "mixed_bfloat16"
    with pytest.raises(TrainerError, match="compute capability >= 8.0"):
        choose_precision("mixed_bfloat16", "gpu", [(7, 5)])


def test_explicit_choices_override_auto():
    assert choose_precision("float32", "gpu", [(9, 0)]).policy == "float32"
    p = choose_precision("mixed_float16", "gpu", [(6, 1)])
    assert p.policy == "mixed_float16" and p.loss_scaling and "no tensor cores" in p.reason


def test_unknown_policy_is_an_error():
    with pytest.raises(TrainerError, match="not one of"):
        choose_precision("float16", "gpu", [(7, 0)])
