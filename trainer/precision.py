"""Which Keras dtype policy to train with, decided from the devices alone.

``auto`` picks:

- TPU: ``mixed_bfloat16`` (TPU matrix units are bfloat16; there is no float16).
- GPUs whose lowest compute capability is >= 7.0 (Volta, Turing, Ampere, Ada,
  Hopper: tensor cores): ``mixed_float16`` with dynamic loss scaling. The
  source articles measured 45-60 % of FP32 training time on T4 and V100.
- GPUs below 7.0 (Pascal and older): ``float32``; they have no tensor cores,
  so float16 saves memory but not time.
- CPU: ``float32``. ``mixed_float16`` on this CPU was measured 73-86x slower
  than float32 and is refused even when asked for. ``mixed_bfloat16`` is
  allowed on request (AMX CPUs run it fast, see bench/trainer_bench.py) but
  not chosen automatically: CPU runs are for debugging, where exact float32
  numerics are worth more than speed.

Compute capability >= 8.0 could take either mixed policy. The choice here is
``mixed_float16``, *provisionally*, until measured on a GPU: on A100/H100 the
dense float16 and bfloat16 tensor-core peaks are equal (312 / 989 TFLOPS), so
bfloat16 wins no throughput and only drops loss scaling, whose cost is one
all-finite check per step; float16 is the policy the TF mixed-precision guide
documents for GPUs on every TF >= 2.16, so one rule (cc >= 7.0) covers every
GPU generation. ``--precision mixed_bfloat16`` overrides it.

The model's last layer is always float32 (see models.py). This module never
imports TensorFlow except in ``apply``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trainer.errors import TrainerError

POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
CHOICES = ("auto",) + POLICIES
TENSOR_CORES = (7, 0)
BFLOAT16_TENSOR_CORES = (8, 0)


@dataclass(frozen=True)
class Precision:
    policy: str
    loss_scaling: bool  # float16 needs a LossScaleOptimizer; bfloat16 and float32 do not
    reason: str


def _make(policy: str, reason: str) -> Precision:
    return Precision(policy=policy, loss_scaling=policy == "mixed_float16", reason=reason)


def _fmt(cc: tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"


def choose_precision(
    requested: str,
    accelerator: str,
    compute_capabilities: Sequence[tuple[int, int] | None] = (),
) -> Precision:
    """``accelerator`` is "cpu", "gpu" or "tpu"; capabilities are one per GPU (None if unknown)."""
    if requested not in CHOICES:
        raise TrainerError(f"--precision {requested!r} is not one of {', '.join(CHOICES)}")
    if accelerator not in ("cpu", "gpu", "tpu"):
        raise TrainerError(f"unknown accelerator {accelerator!r}")
    known = [cc for cc in compute_capabilities if cc is not None]
    lowest = min(known) if known and len(known) == len(compute_capabilities) else None

    if accelerator == "cpu":
        if requested == "mixed_float16":
            raise TrainerError(
                "--precision mixed_float16 on a CPU: float16 has no fast CPU kernels "
                "(measured 73-86x slower than float32); use float32, or mixed_bfloat16 on an AMX CPU"
            )
        if requested == "auto":
            return _make("float32", "CPU: float32 (never float16 on CPU; mixed_bfloat16 only on request)")
        return _make(requested, f"--precision {requested} on CPU")

    if accelerator == "tpu":
        if requested == "mixed_float16":
            raise TrainerError("--precision mixed_float16 on a TPU: TPUs have no float16; use mixed_bfloat16")
        if requested == "auto":
            return _make("mixed_bfloat16", "TPU: bfloat16 matrix units")
        return _make(requested, f"--precision {requested} on TPU")

    # GPU
    if requested == "mixed_bfloat16" and (lowest is None or lowest < BFLOAT16_TENSOR_CORES):
        seen = _fmt(lowest) if lowest else "unknown"
        raise TrainerError(
            f"--precision mixed_bfloat16 needs GPUs with compute capability >= 8.0 (lowest here: {seen}); "
            "use mixed_float16 (cc >= 7.0) or float32"
        )
    if requested != "auto":
        note = ""
        if requested == "mixed_float16" and (lowest is None or lowest < TENSOR_CORES):
            note = " (no tensor cores below cc 7.0: expect memory savings, not speed)"
        return _make(requested, f"--precision {requested}{note}")
    if lowest is None:
        return _make("float32", "GPU compute capability unknown: float32 to be safe")
    if lowest >= BFLOAT16_TENSOR_CORES:
        return _make(
            "mixed_float16",
            f"GPU cc {_fmt(lowest)} >= 8.0: mixed_float16 (provisional: fp16 and bf16 tensor-core peaks are "
            "equal here; --precision mixed_bfloat16 drops loss scaling)",
        )
    if lowest >= TENSOR_CORES:
        return _make("mixed_float16", f"GPU cc {_fmt(lowest)} >= 7.0: tensor cores, mixed_float16 + loss scaling")
    return _make("float32", f"GPU cc {_fmt(lowest)} < 7.0: no tensor cores, float32")


def apply(precision: Precision) -> None:
    """Set the global Keras policy; call before building the model."""
    import keras

    keras.mixed_precision.set_global_policy(precision.policy)
