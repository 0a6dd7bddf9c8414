"""TPU VMs on Vertex AI: the config checks and the ``machineSpec`` of a single-host TPU VM.

The facts (types, chips, topologies, regions, images, prices) are data in
``catalog/data/vertex_tpus.json``; this module applies them to one config and one request.
What Vertex expects, from cloud.google.com/vertex-ai/docs/training/configure-compute#tpu:

* TPU v2/v3: ``{"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 8}``;
* TPU v5e: ``{"machineType": "ct5lp-hightpu-4t", "tpuTopology": "2x2"}`` (the chips are built in).

Only one TPU VM per job for now: ``replica_count`` above 1 (several hosts) is refused.
"""

from __future__ import annotations

from typing import Any

from cloudtrain import catalog
from cloudtrain.catalog import tpus
from cloudtrain.errors import UsageError


def is_tpu(machine_type: str) -> bool:
    return tpus.is_tpu(machine_type)


def check_config(loaded: Any) -> None:
    """A Vertex TPU config: region, topology, one host, TensorFlow >= 2.15 with a TPU image; ConfigError if not.

    The machine itself (type, accelerator, count; TPU and GPU never together) is checked by the
    catalog with every other machine."""
    cfg, err = loaded.config, loaded.error
    try:
        info = catalog.resolve_machine("vertex", cfg.machine.type, cfg.machine.accelerator,
                                       cfg.machine.accelerator_count)  # fmt: skip
    except catalog.CatalogError:
        return  # the machine check says what is wrong
    _run(err, ("machine", "tpu_topology"), lambda: tpus.check_topology(info, cfg.machine.tpu_topology))
    _run(err, ("region",), lambda: tpus.check_region(info, cfg.region))
    if cfg.replica_count > 1:
        raise err(("replica_count",), f"replica_count {cfg.replica_count} asks for several TPU VMs: "
                  f"{tpus.MULTI_HOST}", f"set replica_count: 1 (one {tpus.describe(info)})")  # fmt: skip
    if cfg.image.uri is None and (cfg.container is None):
        tf = cfg.image.tensorflow or tpus.default_tensorflow()
        _run(err, ("image", "tensorflow"), lambda: catalog.training_image("vertex", cfg.region, tf, False, tpu=True))
    elif cfg.image.tensorflow is not None:
        _run(err, ("image", "tensorflow"), lambda: tpus.check_tensorflow(cfg.image.tensorflow))


def _run(err, path: tuple, check) -> None:
    try:
        check()
    except catalog.CatalogError as exc:
        hint = f"e.g. {', '.join(exc.alternatives)}" if exc.alternatives else None
        raise err(path, str(exc), hint) from None


def machine_spec(machine_type: str, accelerator: str | None, accelerator_count: int, topology: str | None,
                 replica_count: int = 1) -> dict:  # fmt: skip
    """The ``machineSpec`` (REST JSON) of a single-host TPU VM: accelerator fields for ``cloud-tpu``,
    ``tpuTopology`` for the types that take one. Several replicas (hosts) are refused in one line."""
    if replica_count > 1:
        raise UsageError(f"{replica_count} × {machine_type}: {tpus.MULTI_HOST}", hint="set replica_count: 1")
    spec: dict[str, Any] = {"machineType": machine_type}
    if topology:
        spec["tpuTopology"] = topology
    else:
        spec["acceleratorType"] = accelerator
        spec["acceleratorCount"] = accelerator_count
    return spec


def local_note(machine_type: str) -> str | None:
    """The one line ``--local`` prints for a TPU config: what runs instead."""
    if not tpus.is_tpu(machine_type):
        return None
    info = catalog.resolve_machine("vertex", machine_type, None if machine_type != "cloud-tpu" else "TPU_V3", None)
    return (f"{machine_type} is a TPU VM ({info.tpu.cores} TPU cores on Vertex AI); --local has no TPU and runs "
            "the same trainer on this machine's CPU/GPUs with the strategy it finds here, not TPUStrategy")
