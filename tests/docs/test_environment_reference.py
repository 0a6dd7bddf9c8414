"""docs/reference/environment.md is cloudtrain/environment_vars.py's table, and that table lists every
variable cloudtrain/ reads or names: a new ``os.environ.get("X")`` or ``CLOUDTRAIN_X`` without a row fails here."""

from __future__ import annotations

import ast
import re

import pytest

from cloudtrain import environment_vars
from cloudtrain.environment_vars import covers, every_variable
from tests.conftest import REPO
from tools import environment_reference

#: A read (or write) of the environment by a literal name: ``os.environ.get("X")``, ``environ["X"]``,
#: ``env.get("X")`` of an injected mapping, ``os.getenv("X")``; and a name kept as a constant ``X_ENV = "X"``.
READ = re.compile(r"""\b(?:environ|env|getenv)(?:\.get|\.pop|\.setdefault)?[(\[]\s*["']([A-Z][A-Z0-9_]+)["']""")
CONSTANT = re.compile(r"""^\s*[A-Z_]*(?:ENV|VAR)\s*=\s*["']([A-Z][A-Z0-9_]+)["']""", re.M)
OWN = re.compile(r"\bCLOUDTRAIN_[A-Z][A-Z0-9_]*")


def named_in(text: str) -> set[str]:
    found = set(READ.findall(text)) | set(CONSTANT.findall(text)) | set(OWN.findall(text))
    return found - {"CLOUDTRAIN_REPLICA"}  # a replica's name (setup_output.py), not a variable


def test_the_scan_sees_each_way_of_reading_a_variable() -> None:
    text = (
        'a = os.environ.get("ONE_A")\nb = os.environ["TWO_B"]\nc = env.get("THREE")\nd = os.getenv("FOUR")\n'
        'SOME_ENV = "FIVE"\n# see $CLOUDTRAIN_SIX\n'
    )
    assert named_in(text) == {"ONE_A", "TWO_B", "THREE", "FOUR", "FIVE", "CLOUDTRAIN_SIX"}


def test_every_variable_cloudtrain_reads_or_names_is_in_the_table() -> None:
    missing = []
    for path in sorted((REPO / "cloudtrain").rglob("*.py")):
        for name in sorted(named_in(path.read_text())):
            if not covers(name) and not (name.endswith("_") and covers(name + "X")):
                missing.append(f"{path.relative_to(REPO)}: {name}")
    assert missing == [], "add these to cloudtrain/environment_vars.py, then `make docs`"


def test_the_table_has_one_row_per_variable_in_a_known_group() -> None:
    names = [v.name for v in every_variable()]
    assert len(names) == len(set(names))
    assert {v.group for v in every_variable()} <= set(environment_vars.groups())
    assert not covers("NOT_A_VARIABLE_OF_OURS") and covers("CLOUDTRAIN_SECRET_HF_TOKEN") and covers("AIP_MODEL_DIR")


def test_the_environment_page_is_the_tables() -> None:
    assert environment_reference.PAGE.read_text() == environment_reference.render(), (
        "docs/reference/environment.md is stale: run `make docs` and commit it"
    )
    page = environment_reference.PAGE.read_text()
    for variable in every_variable():
        assert re.search(rf"^\| `{re.escape(variable.name)}` \| ", page, re.M), variable.name


def test_the_code_reads_its_own_variables_by_the_tables_names() -> None:
    from cloudtrain.backends.vertex import settings, variables
    from cloudtrain.sweeps import params

    assert settings.vertex_endpoint("europe-west4", {variables.VERTEX_ENDPOINT: "127.0.0.1:9"}).address == (
        "127.0.0.1:9"
    )
    assert params.METRIC_ENV == environment_vars.SWEEP_METRIC


#: Modules that name variables only through the table (no string of their own spells one).
BY_THE_TABLES_NAMES = (
    "cloudtrain/history.py",
    "cloudtrain/backends/local/backend.py",
    "cloudtrain/backends/slurm/backend.py",
    "cloudtrain/backends/slurm/shell.py",
    "cloudtrain/backends/slurm/script.py",
    "cloudtrain/backends/slurm/ssh.py",
    "cloudtrain/backends/runner/buckets.py",
)


def spelled(source: str) -> list[str]:
    """The strings in ``source`` (docstrings aside) that are a variable of the table, or a family's start."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and re.fullmatch(r"[A-Z][A-Z0-9_]+", node.value)
        and (covers(node.value) or node.value.endswith("_") and covers(node.value + "X"))
    ]


def test_the_scan_sees_a_variable_spelled_in_code_and_not_in_a_docstring() -> None:
    source = (
        '"""Reads CLOUDTRAIN_CACHE_DIR."""\nimport os\n'
        'os.environ.get("CLOUDTRAIN_CACHE_DIR")\nP = ("AIP_", "PENDING")\n'
    )
    assert spelled(source) == ["CLOUDTRAIN_CACHE_DIR", "AIP_"]


@pytest.mark.parametrize("module", BY_THE_TABLES_NAMES)
def test_these_modules_take_every_variables_name_from_the_table(module: str) -> None:
    assert spelled((REPO / module).read_text()) == []


@pytest.mark.parametrize(
    ("name", "who"),
    [
        ("CLOUDTRAIN_SLURM_NODES", "the Slurm launcher"),  # a backend's own row (backends/slurm/variables.py)
        ("CLOUDTRAIN_SUBDOMAIN", "the launcher in the pods"),
        ("CLOUDTRAIN_RUN_MODULE", "cloudtrain"),
        ("CLOUDTRAIN_SSH_CONFIG", None),  # yours to set
        ("SLURM_JOB_ID", None),
    ],
)
def test_a_name_a_backend_sets_in_the_job_is_reserved_from_its_own_table(name, who) -> None:
    assert environment_vars.reserved(name) == who
    assert covers(name)


def test_each_backends_rows_are_in_its_folder_and_the_neutral_table_names_no_backend() -> None:
    page = environment_reference.render()
    assert [line for line in page.splitlines() if line.startswith("## ")] == [
        "## cloudtrain itself",
        "## Vertex AI",
        "## SageMaker",
        "## Slurm",
        "## Kubernetes",
        "## What the training code gets",
        "## Tests only",
    ]
    assert {v.group for v in environment_vars.VARIABLES} == {"cloudtrain", "job", "tests"}
