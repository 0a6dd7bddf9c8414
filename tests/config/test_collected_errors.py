"""One ``validate`` reports every mistake of a config (issue #28, item 2), in the order to fix them.

Every error whose inputs are valid, ``--set`` first, then by line; a check that reads a field that
already failed is skipped; a file that is not YAML stops at once. Values pinned via ``-o json``.
"""

from __future__ import annotations

import json
import re

from cloudtrain.cli import main
from tests import docs_text
from tests.cli.test_readme_commands import MY_YAML  # the "Errors" example: mistakes at lines 3, 9, 14
from tests.conftest import REPO, VERTEX_BASE


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def errors_of(capsys, *args: str) -> list[dict]:
    code, out, err = run(capsys, "validate", *args, "-o", "json")
    assert code == 2
    result = json.loads(out)
    assert result["valid"] is False
    assert len(err.splitlines()) == len(result["errors"])  # one error: line on stderr each
    return result["errors"]


def test_three_mistakes_are_three_lines_from_one_validate_in_file_order(project, capsys):
    path = project(MY_YAML, name="my.yaml")
    errors = errors_of(capsys, str(path))
    assert [(e["line"], e["field"]) for e in errors] == [
        (3, "region"),
        (9, "machine.accelerator_cout"),
        (14, "spot.enabled"),
    ]
    assert errors[2]["fix"] == "write true or false" and errors[1]["fix"] == "did you mean 'accelerator_count'?"


def test_the_readme_shows_what_validate_prints(project, capsys, monkeypatch):
    """The "Errors" section (docs/reference/errors.md): the three lines of `cloudtrain validate my.yaml`,
    word for word."""
    section = docs_text.section("Errors")
    block = section.split("$ cloudtrain validate my.yaml\n", 1)[1].split("```", 1)[0]
    shown = [line for line in block.splitlines() if line.startswith("error: ")]
    project(MY_YAML, name="my.yaml")
    monkeypatch.chdir(project().parent)
    code, _, err = run(capsys, "validate", "my.yaml")
    assert code == 2 and len(shown) == 3 and err.splitlines() == shown


def test_set_errors_come_first_and_say_set(project, capsys):
    path = project(VERTEX_BASE.replace("us-central1", "us-centrl1"))
    errors = errors_of(capsys, str(path), "--set", "replica_count=two")
    assert [(e["file"], e["field"]) for e in errors] == [("--set", "replica_count"), (str(path), "region")]
    assert errors[0]["fix"] == "write a whole number, e.g. replica_count: 2"  # every line names its fix


def test_a_check_on_a_field_that_failed_is_skipped(project, capsys):
    """A machine type that does not exist is one error: not a second one for its GPUs, nor the budget's."""
    text = VERTEX_BASE.replace("n1-standard-16", "n1-standrd-16") + "budget: {max_usd: 0.01}\nlabels: {Team: x}\n"
    errors = errors_of(capsys, str(project(text)))
    assert [e["field"] for e in errors] == ["machine.type", "labels.Team"]


def test_another_clouds_machine_type_is_one_of_the_collected_errors(capsys):
    errors = errors_of(
        capsys,
        str(REPO / "job_configs" / "cpu.yaml"),
        "--set",
        "machine.type=ml.p3.2xlarge",
        "--set",
        "region=us-centrl1",
    )
    assert [e["field"] for e in errors] == ["machine.type", "region"]
    assert errors[0]["message"] == "ml.p3.2xlarge is a SageMaker instance type and this config runs on Vertex AI"


def test_a_yaml_syntax_error_stops_at_once(project, capsys):
    code, _, err = run(capsys, "validate", str(project(MY_YAML + "labels: {a: b\n")))
    assert code == 2 and len(err.splitlines()) == 1 and "YAML syntax error" in err


def test_a_mis_indented_block_names_the_fix(project, capsys):
    text = VERTEX_BASE.replace(
        "  type: n1-standard-16\n  accelerator: NVIDIA_TESLA_T4\n  accelerator_count: 4\n", "type: n1-standard-16\n"
    )
    code, _, err = run(capsys, "validate", str(project(text)))
    assert code == 2
    assert "valid dictionary" not in err
    lines = err.splitlines()
    assert re.search(
        r"job\.yaml:6: machine: expected a mapping of keys \(type, accelerator, accelerator_count, \.\.\.\)"
        r", received nothing — check its indentation",
        lines[0],
    )
    assert lines[1].endswith("job.yaml:7: type: unknown key 'type' — type belongs under machine: indent it")


def test_a_malformed_set_does_not_hold_back_the_files_checks(project, capsys):
    path = project(VERTEX_BASE.replace("us-central1", "us-centrl1"))
    errors = errors_of(capsys, str(path), "--set", "replica_count")
    assert [(e["file"], e["field"]) for e in errors] == [("--set", None), (str(path), "region")]


def test_every_unreadable_ml_engine_key_at_once(project, capsys):
    text = (
        "name: legacy\nproject: my-project\nstaging_bucket: gs://b\npackage: {path: trainer}\ntrainingInput:\n"
        "  scaleTier: BASIC\n  packageUris: [gs://b/p.tar.gz]\n  masterTyp: standard\n  enableWebAccess: true\n"
    )
    errors = errors_of(capsys, str(project(text)))
    assert [(e["line"], e["field"]) for e in errors] == [
        (7, "trainingInput.packageUris"),
        (8, "trainingInput.masterTyp"),
        (9, "trainingInput.enableWebAccess"),
    ]
