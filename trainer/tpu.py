"""TPU VMs: the probe that finds one, and the rules a TPU run follows (pure; no TensorFlow here).

The probe looks, without TensorFlow, for what a Cloud TPU VM has: its accelerator device files
(``/dev/accel0`` on v4 and later, v5e included; ``/dev/vfio/0`` on v2/v3) or the TPU variables
of its environment (``TPU_NAME``, ``TPU_ACCELERATOR_TYPE``). ``strategy.choose`` turns a found TPU
into ``TPUStrategy`` on the local host (``TPUClusterResolver(tpu="local")``).

The rules (:class:`TpuRules`) are what XLA on a TPU needs, applied by the same training code
with any strategy: ``--tpu-rules`` applies them with the default strategy on a CPU, which is
how they are tested without a TPU.

* global batch = per-core batch × cores (``plan.plan_batches``, as for GPUs);
* ``mixed_bfloat16`` by default (``precision.choose_precision(..., "tpu")``);
* static shapes: every batch full (``drop_remainder``), for evaluation too, so XLA compiles once;
* a fixed ``steps_per_execution`` that divides the epoch: one compiled loop per run, and the
  host's per-call overhead paid once per many steps.

None of this has run on a TPU: see docs/how-to/tpu.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: Most steps in one call on a TPU: bounds the work a preemption notice waits for (~seconds).
MAX_STEPS_PER_EXECUTION = 100
_DEVICE_FILES = ("/dev/accel0", "/dev/vfio/0")
_ENV_VARS = ("TPU_ACCELERATOR_TYPE", "TPU_NAME")


@dataclass(frozen=True)
class TpuProbe:
    found: bool
    accelerator_type: str | None = None  # "v5litepod-4", "v3-8" where the VM says
    topology: str | None = None  # "2x2" where the VM says
    source: str = ""  # what showed the TPU

    def describe(self) -> str:
        kind = self.accelerator_type or "type not reported"
        return f"TPU VM ({kind}; {self.source})"


NO_TPU = TpuProbe(False)


def probe(environ: Mapping[str, str] | None = None, exists: Callable[[str], bool] = os.path.exists) -> TpuProbe:
    """A TPU on this host, from its device files or its environment; ``NO_TPU`` if neither."""
    environ = os.environ if environ is None else environ
    named = [v for v in _ENV_VARS if environ.get(v)]
    files = [f for f in _DEVICE_FILES if exists(f)]
    if not named and not files:
        return NO_TPU
    return TpuProbe(
        True, environ.get("TPU_ACCELERATOR_TYPE") or None, environ.get("TPU_TOPOLOGY") or None, ", ".join(files + named)
    )


@dataclass(frozen=True)
class TpuRules:
    active: bool
    reason: str

    @property
    def static_shapes(self) -> bool:
        return self.active

    @property
    def precision_accelerator(self) -> str | None:
        """What ``precision.choose_precision`` is told: "tpu" (bfloat16 by default) when active."""
        return "tpu" if self.active else None

    def steps_per_execution(self, requested: int | None, steps_per_epoch: int) -> int | None:
        """``requested`` if given; else on TPU the largest divisor of the epoch up to
        :data:`MAX_STEPS_PER_EXECUTION` (every call the same size: one compiled loop); None: auto-size."""
        if requested or not self.active:
            return requested
        return max(d for d in range(1, min(steps_per_epoch, MAX_STEPS_PER_EXECUTION) + 1) if steps_per_epoch % d == 0)


def rules(strategy_name: str, forced: bool = False) -> TpuRules:
    if strategy_name == "tpu":
        return TpuRules(True, "TPUStrategy")
    if forced:
        return TpuRules(True, f"--tpu-rules with the {strategy_name} strategy (no TPU: the rules, tested on CPU)")
    return TpuRules(False, "not a TPU")


def describe(probe_result: TpuProbe, cores: int, mesh_shape=None) -> dict:
    """The plan's ``tpu`` entry: type, cores, topology (the VM's own word, else the mesh TensorFlow reports)."""
    topology = probe_result.topology
    if topology is None and mesh_shape:
        dims = list(mesh_shape)
        while len(dims) > 2 and dims[-1] == 1:
            dims.pop()
        topology = "x".join(str(d) for d in dims)
    return {"type": probe_result.accelerator_type or "not reported", "cores": cores, "topology": topology or "unknown"}
