"""The CLI's error funnel, offline commands and dry-run, through `cloudtrain.cli.main`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cloudtrain.cli import main
from tests.conftest import REPO, VERTEX_BASE

# `google.cloud` itself is an empty namespace a .pth file creates at start-up; its submodules are the SDKs.
CLOUD_MODULES = (
    "google.cloud.",
    "google.api_core",
    "google.auth",
    "grpc",
    "boto3",
    "botocore",
    "sagemaker",
    "tensorflow",
    "keras",
)
#: Not cloud SDKs, but a good part of a dry-run's time when they were imported, and not needed by these paths:
#: pydantic (the tests' oracle of the config reader, never cloudtrain's); rich draws on a terminal only; the rest
#: serve a real submit (log followers, uploads), a gcloud configuration (configparser) or a setup.py (subprocess).
SLOW_MODULES = (
    "pydantic",
    "annotated_types",
    "rich",
    "configparser",
    "subprocess",
    "concurrent.futures",
    "cloudtrain.backends.vertex.logs",
    "cloudtrain.backends.sagemaker.logs",
    "cloudtrain.backends.sagemaker.upload",
    "cloudtrain.data.upload",
)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_config_error_is_one_line_exit_2(project, capsys):
    path = project(VERTEX_BASE + "replica_count: 0\n")
    code, out, err = run(capsys, "validate", str(path))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"{path}:13: replica_count" in lines[0]
    assert "Traceback" not in err


def test_debug_shows_the_traceback_and_keeps_the_exit_code(project, capsys):
    """--debug only adds the traceback: bad input is still exit 2 (docs/reference/exit-codes.md)."""
    path = project(VERTEX_BASE + "replica_count: 0\n")
    code = main(["--debug", "validate", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback (most recent call last)" in err and "cloudtrain.errors.ConfigError" in err
    assert err.strip().splitlines()[-1].startswith(f"error: {path}:13: replica_count")


def test_click_usage_errors_exit_2(capsys):
    code, _, err = run(capsys, "submit", "--bogus")
    assert code == 2 and "No such option" in err


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "job_configs").glob("*.yaml")))
def test_shipped_configs_validate(name, capsys):
    code, out, err = run(capsys, "validate", str(REPO / "job_configs" / name))
    assert code == 0, err
    assert "OK" in out


def test_schema_export_matches_committed_file(capsys):
    code, out, _ = run(capsys, "schema")
    assert code == 0
    schema = json.loads(out)
    assert "machine" in schema["properties"] and schema["additionalProperties"] is False
    committed = json.loads((REPO / "docs" / "cloudtrain.schema.json").read_text())
    assert committed == schema, "run `make schema` and commit docs/cloudtrain.schema.json"


def test_machines_table_filters_by_gpu(capsys):
    code, out, _ = run(capsys, "machines", "--gpu", "T4", "--output", "json")
    rows = json.loads(out)
    assert code == 0 and rows and all(r["gpu"] == "T4" for r in rows)
    assert {r["cloud"] for r in rows} == {"vertex", "sagemaker"}
    code, _, err = run(capsys, "machines", "--gpu", "Z9")
    assert code == 2 and "Z9" in err


def test_package_command_prints_path_and_hash(project, tmp_path, capsys):
    project()
    code, out, _ = run(capsys, "package", str(tmp_path / "trainer"), "--out", str(tmp_path / "dist"), "-o", "json")
    data = json.loads(out)
    assert code == 0 and len(data["sha256"]) == 64 and data["size"] > 0


def test_unknown_job_without_backend_is_one_line(capsys):
    code, _, err = run(capsys, "status", "1234")
    assert code == 2 and "pass --backend and --region" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["submit", "--config", "job_configs/gpu4.yaml", "--dry-run"],
        ["submit", "--config", "job_configs/sagemaker-gpu4.yaml", "--dry-run", "-o", "json"],
        ["validate", "job_configs/multiworker.yaml"],
    ],
)
def test_fast_paths_import_no_cloud_sdk_nor_pydantic(args, tmp_path):
    code = (
        "import sys; from cloudtrain.cli import main; rc = main(sys.argv[1:]);"
        f"bad = sorted(m for m in sys.modules if m.startswith({CLOUD_MODULES + SLOW_MODULES!r}))[:5];"
        "print('IMPORTED', bad, file=sys.stderr); sys.exit(rc or bool(bad))"
    )
    env = {"CLOUDTRAIN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "IMPORTED []" in result.stderr
