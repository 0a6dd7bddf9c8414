"""An unknown key in ``machine:`` does not hide that section's other mistakes when their checks do
not depend on it: ``validate`` reports the unknown key AND the unknown machine type in one run."""

from __future__ import annotations

import json

import pytest

from cloudtrain.cli import main
from tests.conftest import REPO

CONFIG = """\
name: t
backend: {backend}
region: {region}
{where}
machine:
  type: {type}
  {unknown}
package: {{path: {trainer}, module: trainer.task}}
"""
VERTEX = {"backend": "vertex", "region": "us-central1", "where": "project: p\nstaging_bucket: gs://b"}
SAGEMAKER = {
    "backend": "sagemaker",
    "region": "us-east-1",
    "where": "staging_bucket: s3://b\nrole_arn: arn:aws:iam::123456789012:role/R",
}


def _errors(tmp_path, capsys, cloud: dict, type_: str, unknown: str) -> list[tuple[int, str, str]]:
    path = tmp_path / "job.yaml"
    path.write_text(CONFIG.format(**cloud, type=type_, unknown=unknown, trainer=REPO / "trainer"))
    assert main(["validate", "-c", str(path), "-o", "json"]) == 2
    result = json.loads(capsys.readouterr().out)
    return [(e["line"], e["field"], e["fix"]) for e in result["errors"]]


@pytest.mark.parametrize(
    ("cloud", "type_", "unknown", "expected"),
    [
        (
            VERTEX,
            "n1-standrd-8",
            "acelerator: NVIDIA_TESLA_T4",
            [
                (7, "machine.type", "nearest valid: n1-standard-8, n1-standard-4, n1-standard-96"),
                (8, "machine.acelerator", "did you mean 'accelerator'?"),
            ],
        ),
        (
            SAGEMAKER,
            "ml.g4dn.xlarg",
            "dsk_gb: 100",
            [
                (7, "machine.type", "nearest valid: ml.g4dn.xlarge, ml.g4dn.8xlarge, ml.g4dn.4xlarge"),
                (8, "machine.dsk_gb", "did you mean 'disk_gb'?"),
            ],
        ),
    ],
)
def test_an_unknown_key_and_an_unknown_type_are_both_reported(tmp_path, capsys, cloud, type_, unknown, expected):
    assert _errors(tmp_path, capsys, cloud, type_, unknown) == expected


def test_a_valid_type_beside_a_misspelt_accelerator_is_not_refused_for_it(tmp_path, capsys):
    # the type's own check passes; what depends on the unknown key (the accelerator) is not guessed at
    assert _errors(tmp_path, capsys, VERTEX, "n1-standard-8", "acelerator: NVIDIA_TESLA_T4") == [
        (8, "machine.acelerator", "did you mean 'accelerator'?")
    ]
