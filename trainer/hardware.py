"""Which devices this process can train on, and each GPU's compute capability.

``detect`` is the only function that touches TensorFlow (imported inside it),
so ``Device`` and the helpers stay usable where TF is not installed. It must
run before TensorFlow initialises its runtime: splitting the CPU into logical
devices is only possible then.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass

from trainer.errors import TrainerError


@dataclass(frozen=True)
class Device:
    name: str  # TensorFlow's logical device name, e.g. "/device:GPU:0"
    kind: str  # "GPU", "CPU" or "TPU"
    model: str | None = None  # "NVIDIA A100-SXM4-40GB"
    compute_capability: tuple[int, int] | None = None

    def describe(self) -> str:
        short = self.name.replace("/device:", "").replace("/job:localhost/replica:0/task:0", "")
        parts = [short]
        if self.model:
            parts.append(self.model)
        if self.compute_capability:
            parts.append(f"compute capability {self.compute_capability[0]}.{self.compute_capability[1]}")
        return "  ".join(parts)


def accelerator(devices: Sequence[Device]) -> str:
    kinds = {d.kind for d in devices}
    if "TPU" in kinds:
        return "tpu"
    if "GPU" in kinds:
        return "gpu"
    return "cpu"


def gpus(devices: Sequence[Device]) -> list[Device]:
    return [d for d in devices if d.kind == "GPU"]


def cpu_model() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def detect(cpu_devices: int = 1) -> list[Device]:
    """GPUs if there are any, else the CPU (split into ``cpu_devices`` logical devices)."""
    import tensorflow as tf

    if cpu_devices < 1:
        raise TrainerError(f"--cpu-devices must be >= 1, got {cpu_devices}")
    physical_gpus = tf.config.list_physical_devices("GPU")
    if cpu_devices > 1:
        if physical_gpus:
            raise TrainerError("--cpu-devices splits the CPU for testing; this machine has GPUs, use them instead")
        cpu = tf.config.list_physical_devices("CPU")[0]
        try:
            tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * cpu_devices)
        except RuntimeError as exc:  # runtime already initialised
            raise TrainerError(f"cannot split the CPU after TensorFlow started: {exc}") from None
    found = []
    for index, gpu in enumerate(physical_gpus):
        details = tf.config.experimental.get_device_details(gpu)
        cc = details.get("compute_capability")
        found.append(
            Device(
                name=f"/device:GPU:{index}",
                kind="GPU",
                model=details.get("device_name"),
                compute_capability=tuple(cc) if cc else None,
            )
        )
    if found:
        return found
    label = cpu_model()
    if cpu_devices > 1:
        label += f"; logical device {{}} of {cpu_devices}"
        return [Device(f"/device:CPU:{i}", "CPU", label.format(i)) for i in range(cpu_devices)]
    return [Device("/device:CPU:0", "CPU", label)]
