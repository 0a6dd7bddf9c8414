"""The facts each registered backend states (``BackendFacts``), checked against what reads them: a backend
that states one wrongly fails here, not in a user's submit. The core asks these facts instead of naming
a backend (issue #29)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from cloudtrain.backends import DEFAULT_CONTRACT, LOCAL, get_backend, names, sdk_modules
from cloudtrain.extras import extra_of
from cloudtrain.secrets.refs import EXAMPLES, STORES, parse_ref, store_command

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
STORED = sorted(n for n in names() if get_backend(n).secret_kind in STORES)


def test_the_clouds_read_their_own_secret_stores_and_slurm_the_submitting_shell() -> None:
    kinds = {n: get_backend(n).secret_kind for n in names() if get_backend(n).secret_kind is not None}
    assert kinds == {"vertex": "gcp", "sagemaker": "aws", "slurm": "shell"}


@pytest.mark.parametrize("name", STORED)
def test_a_secret_kind_is_a_cloud_store_whose_references_parse_and_whose_command_is_known(name: str) -> None:
    kind = get_backend(name).secret_kind
    assert kind in STORES  # its title and reader name it in messages
    assert parse_ref(EXAMPLES[kind]).kind == kind
    command, instead = store_command(kind, "HF_TOKEN", parse_ref("shell:HF_TOKEN"), project="p", region="us-east-1")
    assert '"$HF_TOKEN"' in command and instead.startswith(f"{kind}:")


@pytest.mark.parametrize("name", names())
def test_a_backend_whose_jobs_run_here_has_no_bill_no_location_and_no_store(name: str) -> None:
    backend = get_backend(name)
    if backend.runs_here:
        assert (backend.billed, backend.location_keys, backend.secret_kind) == (False, (), None)
    assert not backend.sweeps_here or backend.runs_here  # a study of Optuna's runs its trials here


def test_the_local_backend_runs_here_and_runs_its_own_sweeps() -> None:
    local = get_backend(LOCAL)
    assert (local.runs_here, local.sweeps_here) == (True, True)
    assert [n for n in names() if get_backend(n).runs_here] == [LOCAL]


def test_the_default_contract_is_a_registered_backend_with_a_contract_to_follow() -> None:
    assert DEFAULT_CONTRACT in names()
    assert get_backend(DEFAULT_CONTRACT).local_contract is not None
    assert get_backend(LOCAL).contract == DEFAULT_CONTRACT  # --local without a target
    assert get_backend("slurm").contract == DEFAULT_CONTRACT


def test_each_backends_cloud_libraries_are_its_extra_and_exist() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    modules = sdk_modules()
    assert sorted(set(modules.values())) == ["sagemaker", "vertex"]
    for module, backend in modules.items():
        assert backend in names() and backend in extras
        assert extra_of(module) == (backend, get_backend(backend).title)
        assert importlib.util.find_spec(module) is not None, f"{module}: no such module in the {backend} extra"
    assert extra_of("matplotlib") == ("report", "run report")
    assert extra_of("numpy") is None
