"""cloudtrain: one command from a TensorFlow training package to Vertex AI or SageMaker GPUs.

Also a Python API (see docs/how-to/python-api.md)::

    import cloudtrain
    cfg = cloudtrain.load_config("job_configs/gpu4.yaml", overrides={"machine.accelerator_count": 8})
    plan = cloudtrain.plan(cfg)
    job = cloudtrain.submit(cfg)
    for line in job.logs(follow=True): ...

``import cloudtrain`` stays cheap (the CLI imports it on every start): the API's names load
:mod:`cloudtrain.api` when first used."""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers read it as True)
if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ loads them
    from typing import Any

    from cloudtrain.api import (
        Config,
        Job,
        Plan,
        Sweep,
        attach,
        jobs,
        load_config,
        plan,
        report,
        submit,
        submit_sweep,
        sweep_results,
        tensorboard,
    )

__all__ = [
    "__version__",
    "Config",
    "Job",
    "Plan",
    "Sweep",
    "attach",
    "jobs",
    "load_config",
    "plan",
    "report",
    "submit",
    "submit_sweep",
    "sweep_results",
    "tensorboard",
]
_API = frozenset(__all__) - {"__version__"}  # the names __getattr__ loads from cloudtrain.api


def __getattr__(name: str) -> Any:
    """PEP 562: the API's names, imported on first use."""
    if name in _API:
        from cloudtrain import api

        return getattr(api, name)
    raise AttributeError(f"module 'cloudtrain' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
