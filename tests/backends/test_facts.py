"""The facts each registered backend states (``BackendFacts``), checked against what reads them: a backend
that states one wrongly fails here, not in a user's submit. The core asks these facts instead of naming
a backend (issue #29). The tests iterate the registry and name no backend: a plugin's backend
(tests/backends/test_plugin.py) is checked by the same lines."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from cloudtrain.backend_rules import Capability, extra_of
from cloudtrain.backends import DEFAULT_CONTRACT, LOCAL, get_backend, names, sdk_modules
from cloudtrain.secrets.refs import EXAMPLES, STORES, parse_ref, store_command

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
STORED = sorted(n for n in names() if get_backend(n).facts.secret_kind in STORES)


def test_each_backend_with_a_secret_store_reads_a_store_of_its_own() -> None:
    kinds = [get_backend(n).facts.secret_kind for n in STORED]
    assert STORED and len(set(kinds)) == len(kinds)  # no two backends read one cloud's store
    assert set(kinds) <= set(STORES)


@pytest.mark.parametrize("name", STORED)
def test_a_secret_kind_is_a_cloud_store_whose_references_parse_and_whose_command_is_known(name: str) -> None:
    kind = get_backend(name).facts.secret_kind
    assert kind in STORES  # its title and reader name it in messages
    assert parse_ref(EXAMPLES[kind]).kind == kind
    command, instead = store_command(kind, "HF_TOKEN", parse_ref("shell:HF_TOKEN"), project="p", region="us-east-1")
    assert '"$HF_TOKEN"' in command and instead.startswith(f"{kind}:")


@pytest.mark.parametrize("name", names())
def test_a_backend_whose_jobs_run_here_has_no_bill_no_location_and_no_store(name: str) -> None:
    backend = get_backend(name)
    can = backend.facts.capabilities
    if Capability.RUNS_HERE in can:
        assert (Capability.BILLED in can, backend.facts.location_keys, backend.facts.secret_kind) == (False, (), None)
    # SWEEPS_HERE (an Optuna study on this machine) no longer implies RUNS_HERE: Kubernetes' trials are Jobs


def test_the_local_backend_runs_here_and_runs_its_own_sweeps() -> None:
    local = get_backend(LOCAL).facts.capabilities
    assert (Capability.RUNS_HERE in local, Capability.SWEEPS_HERE in local) == (True, True)
    assert [n for n in names() if Capability.RUNS_HERE in get_backend(n).facts.capabilities] == [LOCAL]


@pytest.mark.parametrize("name", names())
def test_each_refusal_a_backend_would_print_reads_as_one_line_with_its_fields_filled(name: str) -> None:
    """What a check prints for a capability the backend lacks: its own words (or the default), every field
    filled, never for a capability it has."""
    backend = get_backend(name)
    for capability in Capability:
        if capability in backend.facts.capabilities:
            assert capability not in backend.facts.capabilities.reasons
            continue
        message, hint = backend.facts.capabilities.refusal(capability).format(title=backend.words.title, image="img:1")
        assert message and "\n" not in message and "{" not in message and "{title}" not in hint


def test_the_default_contract_is_a_registered_backend_with_a_contract_to_follow() -> None:
    assert DEFAULT_CONTRACT in names()
    assert get_backend(DEFAULT_CONTRACT).local_contract is not None
    assert get_backend(LOCAL).facts.contract == DEFAULT_CONTRACT  # --local without a target


@pytest.mark.parametrize("name", names())
def test_a_backend_that_follows_another_contract_names_one_with_a_contract(name: str) -> None:
    """A job that runs outside the clouds (``--local``, a cluster) follows a cloud's contract: a registered
    backend that states one. A backend with a contract of its own names none."""
    backend = get_backend(name)
    if backend.facts.contract is not None:
        assert backend.facts.contract in names() and backend.facts.contract != name
        assert get_backend(backend.facts.contract).local_contract is not None
    assert Capability.FOLLOWS_TARGET not in backend.facts.capabilities or backend.facts.contract is not None


def test_each_backends_cloud_libraries_are_its_extra_and_exist() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    modules = sdk_modules()
    assert modules and set(modules.values()) <= set(extras) & set(names())  # a backend's extra: its cloud's libraries
    for module, backend in modules.items():
        assert backend in names() and backend in extras
        assert extra_of(module) == (backend, get_backend(backend).words.title)
        assert importlib.util.find_spec(module) is not None, f"{module}: no such module in the {backend} extra"
    assert extra_of("matplotlib") == ("report", "run report")
    assert extra_of("numpy") is None
