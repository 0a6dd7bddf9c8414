"""What a Slurm sweep takes, checked offline (``validate``): one line per problem, naming the key."""

from __future__ import annotations

from cloudtrain.config.loaded import LoadedConfig


def check_sweep(loaded: LoadedConfig) -> None:
    """A trial on Slurm is an array task that reports its result when it ends: no pruning while it runs; its
    job is written from templates on the nodes, which carry no secret file, so ``secrets:`` is refused."""
    sweep = loaded.config.sweep
    if sweep is not None and loaded.config.secrets:
        raise loaded.error(
            ("secrets",),
            "a Slurm sweep's trials are written on the nodes, where no secret file is sent",
            "remove secrets: from the sweep (or run the sweep --local, or as single Slurm jobs)",
        )
    if sweep is not None and sweep.early_stopping:
        raise loaded.error(
            ("sweep", "early_stopping"),
            "a Slurm sweep's trials report their metric when they end, so none is stopped early",
            "remove sweep.early_stopping (or run the sweep --local)",
        )
