"""What a Slurm sweep takes, checked offline (``validate``): one line per problem, naming the key."""

from __future__ import annotations

from cloudtrain.config.loaded import LoadedConfig


def check_sweep(loaded: LoadedConfig) -> None:
    """A trial on Slurm is an array task that reports its result when it ends: no pruning while it runs.
    (``secrets:`` are taken: the array's tasks read the sweep's one 0600 file, :mod:`.sweep_array`.)"""
    sweep = loaded.config.sweep
    if sweep is not None and sweep.early_stopping:
        raise loaded.error(
            ("sweep", "early_stopping"),
            "a Slurm sweep's trials report their metric when they end, so none is stopped early",
            "remove sweep.early_stopping (or run the sweep --local)",
        )
