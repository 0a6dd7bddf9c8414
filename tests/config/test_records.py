"""The config records' one reader against the schema's pydantic twin (tests/config/pydantic_twin.py).

``records.validate`` accepts what pydantic accepts, with the same values and the same fields set, and
refuses the rest with the errors pydantic gives (kind, place, words, value), which the loader words.
The mutations below put every kind of wrong (and right) value at every place of a config that uses
every record, and compare the two; ``records.json_schema`` is pydantic's JSON Schema of the model.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from cloudtrain.config.load import _has, load_config
from cloudtrain.config.records import Invalid, Record, json_schema, validate
from cloudtrain.config.schema import JobConfig, Machine, SweepParam
from tests.config.pydantic_twin import _record, errors_of, model_of

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
        return validate(cls, data)
    except Invalid:
        return None


def _data_path(loc, data, *, missing):
    """The place in the data of an error's location: pydantic's also names the union member tried (``'str'``,
    ``'int'``, ``DataChannel``), which the data does not have."""
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node or isinstance(node, list) and _has(node, part):
            node = node[part]
            path.append(part)
        elif i < len(loc) - 1 and isinstance(node, dict):
            continue  # a union member's name, not a key of the data
        else:
            if missing and isinstance(node, dict):
                path.append(part)
            break
    return tuple(path)


def _errors(errors, data):
    """Each error's kind, place in the data, words, value and context (pydantic's locations also name the
    union member tried, ``'int'``; the loader reads the place in the data, as here)."""
    return [
        (
            e["type"],
            _data_path(e["loc"], data, missing=e["type"] == "missing"),
            e["msg"],
            repr(e["input"]),
            repr({k: v for k, v in (e.get("ctx") or {}).items() if k != "error"}),
        )
        for e in errors
    ]


def _fast_errors(cls, data):
    try:
        validate(cls, data)
    except Invalid as exc:
        return exc.errors
    return []


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
            assert slow is not None, f"{label}: validate() took what pydantic refuses"
            assert _same(fast, slow), f"{label}: validate() and pydantic differ"
        else:
            refused += 1
            assert slow is None, f"{label}: validate() refused what pydantic takes"
            mine, theirs = _fast_errors(JobConfig, copy.deepcopy(data)), errors_of(JobConfig, copy.deepcopy(data))
            assert _errors(mine, data) == _errors(theirs, data), f"{label}: the errors differ"
    assert len(cases) > 1000 and accepted > 100 and refused > 500  # the mutations reach both sides


@pytest.mark.parametrize(
    "change",
    [
        {"labels": {" a ": " b "}},
        {"labels": {1: "b"}},
        {"name": " bad name "},
        {"name": "1abc"},
        {"hyperparameters": {" k ": [1]}},
        {"data": {"x": {"source": " s ", "input_mode": " File"}}},
        {"sweep": {"metric": "m", "params": {"p": {"values": [True, 1, 1.5, " s ", None]}}}},
        {"secrets": {" A ": " shell:X "}},
    ],
)
def test_padded_keys_odd_keys_and_lists_of_unions_read_as_pydantic_reads_them(change) -> None:
    data = {**copy.deepcopy(FULL), **change}
    fast, slow = _fast(JobConfig, copy.deepcopy(data)), _pydantic(JobConfig, copy.deepcopy(data))
    assert (fast is None) == (slow is None)
    assert fast is None or _same(fast, slow)
    assert _errors(_fast_errors(JobConfig, data), data) == _errors(errors_of(JobConfig, data), data)


@pytest.mark.parametrize("data", [None, [], "x", {}])
def test_what_is_no_mapping_is_refused_as_pydantic_refuses_it(data) -> None:
    assert _fast_errors(JobConfig, data) == errors_of(JobConfig, data) != []


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "job_configs").glob("*.yaml")))
def test_shipped_configs_read_as_pydantic_reads_them(name: str) -> None:
    data = load_config(REPO / "job_configs" / name).source.data
    fast = _fast(JobConfig, copy.deepcopy(data))
    assert fast is not None, "a shipped config is refused"
    assert _same(fast, _pydantic(JobConfig, copy.deepcopy(data)))


def test_a_padded_string_is_stripped_and_still_becomes_a_record() -> None:
    data = copy.deepcopy(FULL)
    data["region"] = " us-central1 "  # pydantic strips it, and so does validate()
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


def test_the_json_schema_is_pydantics_key_for_key_and_in_its_order() -> None:
    mine, theirs = json_schema(JobConfig), model_of(JobConfig).model_json_schema()
    assert json.dumps(mine, indent=2) == json.dumps(theirs, indent=2)
    assert mine["properties"]["max_runtime"] == {
        "default": 86400,
        "description": "Stop the job after this long (e.g. 24h).",
        "gt": 0,
        "title": "Max Runtime",
        "type": "integer",
    }


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
    with pytest.raises(Invalid):
        SweepParam(scale="cubic")
