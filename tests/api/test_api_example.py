"""The issue's (#30) API example, as written, with 8 GPUs: refused, because Vertex AI attaches at most 4
T4s to one N1 machine. The refusal is the CLI's one line (exit 2), naming the field, what it takes and
the nearest valid machines; docs/how-to/python-api.md shows it and says why."""

from __future__ import annotations

import pytest

import cloudtrain
from cloudtrain.cli import main
from cloudtrain.errors import ConfigError, ExitCode
from tests.conftest import REPO

REFUSAL = (
    "--set: machine.accelerator_count: n1-standard-16 (16 vCPUs, 60 GB) takes NVIDIA_TESLA_T4 with "
    "accelerator_count 1, 2, 4, received 8; NVIDIA_TESLA_T4 comes in accelerator_count 1, 2, 4 on n1-standard"
    " — nearest valid: n1-standard-16 with 4 × NVIDIA_TESLA_T4, n1-standard-16 with 2 × NVIDIA_TESLA_T4, "
    "n1-standard-16 with 8 × NVIDIA_TESLA_V100, g2-standard-96 (8 × NVIDIA_L4)"
)


def test_eight_t4s_on_one_machine_are_refused_in_one_line_naming_the_nearest_machines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)  # the example's relative path, from the repository's root as in the docs
    with pytest.raises(ConfigError) as refused:
        cloudtrain.load_config("job_configs/gpu4.yaml", overrides={"machine.accelerator_count": 8})
    assert str(refused.value) == REFUSAL
    assert refused.value.exit_code == ExitCode.BAD_INPUT == 2
    assert len(getattr(refused.value, "errors", None) or [refused.value]) == 1  # one error, one line
    assert capsys.readouterr() == ("", "")  # the API prints nothing

    code = main(["submit", "--config", "job_configs/gpu4.yaml", "--set", "machine.accelerator_count=8", "--dry-run"])
    assert (code, capsys.readouterr().err) == (2, f"error: {REFUSAL}\n")  # the CLI's line is the same


def test_the_docs_show_the_refusal_and_why() -> None:
    page = (REPO / "docs" / "how-to" / "python-api.md").read_text()
    assert 'overrides={"machine.accelerator_count": 8}' in page
    assert "at most 4 × NVIDIA_TESLA_T4" in page
    assert "nearest valid: n1-standard-16 with 4 × NVIDIA_TESLA_T4" in page
    assert '"machine.accelerator": "NVIDIA_TESLA_V100", "machine.accelerator_count": 8' in page


def test_the_fix_the_docs_suggest_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    cfg = cloudtrain.load_config(
        "job_configs/gpu4.yaml", overrides={"machine.accelerator": "NVIDIA_TESLA_V100", "machine.accelerator_count": 8}
    )
    assert (cfg.spec.machine.type, cfg.spec.machine.accelerator, cfg.spec.machine.accelerator_count) == (
        "n1-standard-16",
        "NVIDIA_TESLA_V100",
        8,
    )
