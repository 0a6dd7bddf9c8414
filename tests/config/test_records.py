"""The pydantic-free config records against their pydantic twin.

``records.read`` may accept only what pydantic accepts, with the same values and the same
fields set; everything else goes to pydantic, whose errors the loader words. The mutations
below put every kind of wrong (and right) value at every place of a config that uses every
record, and compare the two.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from cloudtrain.config import load_config
from cloudtrain.config.records import Mismatch, Record, read
from cloudtrain.config.schema import JobConfig, Machine, SweepParam
from cloudtrain.config.twin import Invalid, _record, model_of, validate

REPO = Path(__file__).resolve().parents[2]

#: Every record and every kind of field: unions, bounds, durations, versions, Literals, dicts of records.
FULL: dict[str, Any] = {
    "name": "mnist-gpu4",
    "name_suffix": False,
    "backend": "vertex",
    "region": "us-central1",
    "project": "p",
    "staging_bucket": "gs://b",
    "machine": {"type": "n1-standard-16", "accelerator": "NVIDIA_TESLA_T4", "accelerator_count": 4, "disk_gb": 200},
    "replica_count": 2,
    "package": {
        "path": "trainer",
        "module": "trainer.task",
        "requirements": ["numpy<3"],
        "name": "trainer",
        "version": "1.0",
    },
    "args": ["--epochs", "3"],
    "hyperparameters": {"lr": 0.01, "steps": 10, "fast": True, "opt": "adam"},
    "image": {"tensorflow": "2.17", "python": "3.10"},
    "spot": {"enabled": True, "max_wait": "2h"},
    "max_runtime": "1h30m",
    "labels": {"team": "ml"},
    "env": {"A": "1"},
    "model_dir": True,
    "distribution": {"multi_worker_mirrored_strategy": {"enabled": True}},
    "data": {
        "train": "gs://b/train",
        "eval": {"source": "gs://b/eval", "input_mode": "File", "distribution": "FullyReplicated"},
    },
    "sweep": {
        "metric": "val_accuracy",
        "goal": "minimize",
        "max_trials": 4,
        "parallel_trials": 2,
        "algorithm": "random",
        "seed": 3,
        "params": {"lr": {"min": 0.001, "max": 0.1, "scale": "log"}, "units": {"values": [32, 64]}},
    },
    "flex_start": {"enabled": False, "max_wait": 3600},
    "max_queue": "30m",
    "budget": {"max_usd": 20, "max_hours": 1.5},
    "fallback": [
        {
            "region": "europe-west4",
            "machine": {"accelerator_count": 2},
            "data": {"x": {"source": "gs://c"}},
            "spot": {"enabled": False},
            "max_runtime": 600,
        }
    ],
    "local": {"python": "3.10"},
}

PROBES = [
    True,
    False,
    0,
    1,
    -1,
    10**30,
    1.5,
    0.0,
    math.inf,
    math.nan,
    "",
    "x",
    " x ",
    "2.10",
    "90s",
    "0s",
    "a\nb",
    "File",
    "vertex",
    None,
    [],
    ["a"],
    [1],
    {},
    {"a": 1},
    {"source": "gs://x"},
    {"enabled": True},
]


def _pydantic(cls, data):
    try:
        return _record(model_of(cls).model_validate(data))
    except ValidationError:
        return None


def _fast(cls, data):
    try:
        return read(cls, data)
    except Mismatch:
        return None


def _same(a: Record, b: Record) -> bool:
    """Equal values and equal fields-set, all the way down."""
    if type(a) is not type(b) or a.model_fields_set != b.model_fields_set:
        return False
    for name in a.model_fields:
        x, y = getattr(a, name), getattr(b, name)
        pairs = (
            list(zip(x, y, strict=True))
            if isinstance(x, list) and isinstance(y, list) and len(x) == len(y)
            else [(x[k], y[k]) for k in x]
            if isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys()
            else [(x, y)]
        )
        for u, v in pairs:
            if isinstance(u, Record) and not _same(u, v):
                return False
            if not isinstance(u, Record) and not (u == v and type(u) is type(v) or u != u and v != v):
                return False
    return True


def _leaves(node, path=()):
    """Every place a value sits: (path, container, key)."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        yield path + (key,), node, key
        if isinstance(value, (dict, list)):
            yield from _leaves(value, path + (key,))


def _mutations():
    for path, _, _ in list(_leaves(FULL)):
        for probe in PROBES:
            data = copy.deepcopy(FULL)
            node = data
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = probe
            yield f"{'.'.join(map(str, path))}={probe!r}", data
        data = copy.deepcopy(FULL)
        node = data
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, dict):
            del node[path[-1]]
            yield f"without {'.'.join(map(str, path))}", data
    for path, _, _ in list(_leaves(FULL)):
        data = copy.deepcopy(FULL)
        node = data
        for key in path:
            node = node[key]
        if isinstance(node, dict):
            node["typo_key"] = 1
            yield f"unknown key under {'.'.join(map(str, path))}", data


def _padded(node) -> bool:
    if isinstance(node, str):
        return node != node.strip()
    values = [*node.keys(), *node.values()] if isinstance(node, dict) else node if isinstance(node, list) else []
    return any(_padded(v) for v in values)


def test_the_full_config_is_valid_and_read_as_pydantic_reads_it() -> None:
    fast, slow = _fast(JobConfig, FULL), _pydantic(JobConfig, FULL)
    assert fast is not None and slow is not None
    assert _same(fast, slow) and fast.model_dump() == slow.model_dump()


def test_every_mutation_is_accepted_only_as_pydantic_accepts_it() -> None:
    cases = list(_mutations())
    accepted = refused = 0
    for label, data in cases:
        fast, slow = _fast(JobConfig, copy.deepcopy(data)), _pydantic(JobConfig, copy.deepcopy(data))
        if fast is not None:
            accepted += 1
            assert slow is not None, f"{label}: read() took what pydantic refuses"
            assert _same(fast, slow), f"{label}: read() and pydantic differ"
        elif slow is None:
            refused += 1
        else:  # pydantic alone took it: only a string it strips, which read() leaves to pydantic
            assert _padded(data), f"{label}: read() refused what pydantic takes"
    assert len(cases) > 1000 and accepted > 100 and refused > 500  # the mutations reach both sides


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "job_configs").glob("*.yaml")))
def test_shipped_configs_read_without_pydantic_as_pydantic_reads_them(name: str) -> None:
    data = load_config(REPO / "job_configs" / name).source.data
    fast = _fast(JobConfig, copy.deepcopy(data))
    assert fast is not None, "a shipped config went through pydantic: read() should take it"
    assert _same(fast, _pydantic(JobConfig, copy.deepcopy(data)))


def test_what_only_pydantic_takes_still_becomes_a_record() -> None:
    data = copy.deepcopy(FULL)
    data["region"] = " us-central1 "  # pydantic strips it; read() leaves that to pydantic
    config = validate(JobConfig, data)
    assert isinstance(config, JobConfig) and config.region == "us-central1"
    assert isinstance(config.machine, Machine) and config.sweep is not None
    assert isinstance(config.sweep.params["lr"], SweepParam)
    assert "region" in config.model_fields_set and "target" not in config.model_fields_set


def test_invalid_data_carries_pydantics_errors() -> None:
    with pytest.raises(Invalid) as caught:
        validate(JobConfig, {**FULL, "replica_count": 0})
    assert caught.value.errors[0]["loc"] == ("replica_count",)
    assert caught.value.errors[0]["msg"] == "Input should be greater than or equal to 1"


def test_records_read_like_pydantic_models() -> None:
    config = validate(JobConfig, copy.deepcopy(FULL))
    assert isinstance(config, JobConfig) and config.sweep is not None
    param = SweepParam(values=[0.1, 0.2])
    assert param.values == [0.1, 0.2] and param.model_fields_set == {"values"} and param.scale == "linear"
    assert param.model_dump(exclude_none=True) == {"scale": "linear", "values": [0.1, 0.2]}
    assert repr(param) == "SweepParam(type=None, min=None, max=None, scale='linear', values=[0.1, 0.2])"
    sweep = config.sweep.model_copy(update={"seed": 7})
    assert sweep.seed == 7 and config.sweep.seed == 3 and "seed" in sweep.model_fields_set
    assert sweep != config.sweep and sweep.model_copy(update={"seed": 3}) == config.sweep
    assert config.model_dump(exclude={"package"}).keys() == JobConfig.model_fields.keys() - {"package"}
    assert hash(config.machine) == hash(validate(Machine, {**FULL["machine"]}))
    with pytest.raises(TypeError, match="frozen"):
        config.machine.type = "n1-standard-4"
    with pytest.raises(Mismatch):
        SweepParam(scale="cubic")
