"""The one ``mapped:`` line (issue #25): every mapping says what, to what, why and the price change.

Values are pinned through ``validate -o json`` / ``submit --dry-run -o json``: their ``notes`` are
the ``mapped:`` lines the text output prints.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from cloudtrain import catalog
from cloudtrain.cli import main
from cloudtrain.text import mapped_line
from tests.conftest import REPO


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def json_of(capsys, *args: str) -> dict:
    code, out, err = run(capsys, *args, "-o", "json")
    assert code == 0, err
    return json.loads(out)


def price(cloud: str, machine: str, accelerator: str | None = None, count: int = 0) -> str:
    return f"${catalog.resolve_machine(cloud, machine, accelerator, count).price_per_hour:,.2f}/h"


def test_the_format_with_and_without_prices():
    assert (
        mapped_line("machine", "a", "b", "why", (1.5, 1234.567))
        == "mapped: machine: a → b (why); $1.50/h → $1,234.57/h"
    )
    assert (
        mapped_line("machine", "a", "b", "why", (None, 2.0))
        == "mapped: machine: a → b (why); (no current price) → $2.00/h"
    )
    assert mapped_line("image.tensorflow", "2.17", "2.18", "why") == "mapped: image.tensorflow: 2.17 → 2.18 (why)"


LEGACY = """\
name: legacy
project: my-project
staging_bucket: gs://my-bucket
package: {path: trainer, module: trainer.task}
trainingInput:
  masterType: {master}
  region: us-central1
"""


def test_an_ml_engine_machine_name_that_vertex_still_offers_says_so(project, capsys):
    """standard_p100 became n1-standard-8 + P100 with no line at all."""
    path = project(LEGACY.replace("{master}", "standard_p100"))
    notes = json_of(capsys, "validate", str(path))["notes"]
    assert notes == [
        "mapped: trainingInput.masterType: standard_p100 (n1-standard-8 with 1 × P100) → n1-standard-8 with "
        "1 × NVIDIA_TESLA_P100 (ML Engine's name for this machine; Vertex AI names it by machine type and GPUs); "
        f"(no current price) → {price('vertex', 'n1-standard-8', 'NVIDIA_TESLA_P100', 1)}"
    ]


def test_a_retired_gpu_is_mapped_with_its_reason_and_price(project, capsys):
    path = project(LEGACY.replace("{master}", "complex_model_m_gpu"))
    notes = json_of(capsys, "validate", str(path))["notes"]
    assert notes == [
        "mapped: trainingInput.masterType: complex_model_m_gpu (n1-standard-16 with 4 × K80) → n1-standard-16 "
        "with 4 × NVIDIA_TESLA_T4 (K80 is retired and T4 is the cheapest GPU at least as fast on Vertex AI); "
        f"(no current price) → {price('vertex', 'n1-standard-16', 'NVIDIA_TESLA_T4', 4)}"
    ]


def test_strict_legacy_refuses_the_silent_mapping_too(project, capsys):
    path = project(LEGACY.replace("{master}", "standard_p100"))
    code, _, err = run(capsys, "validate", str(path), "--strict-legacy")
    assert code == 2
    assert err.startswith("error: --strict-legacy: mapped: trainingInput.masterType: standard_p100")


def test_a_config_moved_to_the_other_cloud_maps_machine_region_and_tensorflow(capsys):
    notes = json_of(
        capsys,
        "validate",
        str(REPO / "job_configs" / "gpu4.yaml"),
        "--set",
        "backend=sagemaker",
        "--set",
        "role_arn=arn:aws:iam::123456789012:role/R",
        "--set",
        "staging_bucket=s3://b",
    )["notes"]
    assert notes == [
        "mapped: machine: n1-standard-16 with 4 × NVIDIA_TESLA_T4 (Vertex AI) → ml.g4dn.12xlarge (4 × T4) "
        "(SageMaker's cheapest machine with these GPUs and at least the vCPUs and memory); "
        f"{price('vertex', 'n1-standard-16', 'NVIDIA_TESLA_T4', 4)} → {price('sagemaker', 'ml.g4dn.12xlarge')}",
        "mapped: region: us-central1 → us-east-2 (the nearest SageMaker region)",
        "mapped: image.tensorflow: 2.17 → 2.18 (SageMaker has no TensorFlow 2.17 image; the nearest it offers, "
        "the newer on a tie)",
    ]


# --- bug 5: another cloud's machine type typed into a config is refused -----------------------------


def test_a_sagemaker_instance_type_on_a_vertex_config_is_refused(capsys):
    code, out, err = run(
        capsys, "validate", str(REPO / "job_configs" / "cpu.yaml"), "--set", "machine.type=ml.p3.2xlarge"
    )
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(
        "error: --set: machine.type: ml.p3.2xlarge is a SageMaker instance type and this config runs on Vertex AI"
    )
    assert "nearest on Vertex AI: n1-highmem-8 with 1 × NVIDIA_TESLA_V100 ($3.40/h); " in line  # numbers.money
    assert "--set backend=sagemaker" in line


def test_a_mapped_price_over_a_thousand_dollars_is_grouped_to_the_cent():
    """Every mapping's price goes through numbers.money, the one dollar formatter."""
    from cloudtrain.text import mapped_line

    assert mapped_line("machine.type", "a", "b", "why", (1234.5, None)) == (
        "mapped: machine.type: a → b (why); $1,234.50/h → (no current price)"
    )


def test_a_vertex_machine_type_in_a_sagemaker_file_is_refused_at_its_line(project, capsys):
    path = project(
        textwrap.dedent("""\
        name: demo
        backend: sagemaker
        region: us-east-1
        role_arn: arn:aws:iam::123456789012:role/R
        staging_bucket: s3://my-bucket
        machine:
          type: n1-standard-8
        package: {path: trainer, module: trainer.task}
        """)
    )
    code, _, err = run(capsys, "validate", str(path))
    assert code == 2
    assert err.startswith(
        f"error: {path}:7: machine.type: n1-standard-8 is a Vertex AI machine type and this config runs on SageMaker"
    )
    assert "--set backend=vertex" in err


# --- bug 4: a fallback on another backend runs the main request's TensorFlow --------------------------


def test_a_sagemaker_fallback_runs_the_main_requests_tensorflow_or_the_nearest_newer(capsys):
    result = json_of(capsys, "submit", str(REPO / "job_configs" / "fallback.yaml"), "--dry-run")
    sagemaker = result["fallbacks"][1]
    image = sagemaker["request"]["AlgorithmSpecification"]["TrainingImage"]
    assert image.endswith("/tensorflow-training:2.18-gpu-py310")  # the main request runs 2.17 with Python 3.10
    assert (
        "mapped: image.tensorflow: 2.17 → 2.18 (SageMaker has no TensorFlow 2.17 image; the nearest it offers, the "
        "newer on a tie; the main request runs it)" in sagemaker["notes"]
    )
    assert result["fallbacks"][0]["notes"] == []  # the same backend: nothing mapped


SAGEMAKER_MAIN = """\
name: demo
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/R
staging_bucket: s3://my-bucket
machine: {{type: ml.g4dn.xlarge}}
package: {{path: trainer, module: trainer.task}}
{image}fallback:
  - backend: vertex
    region: us-central1
    project: my-project
    staging_bucket: gs://my-bucket
    machine: {{type: n1-standard-8, accelerator: NVIDIA_TESLA_T4, accelerator_count: 1}}
"""


@pytest.mark.parametrize(
    ("image", "uri", "notes"),
    [
        ("image: {tensorflow: '2.16'}\n", "tf-gpu.2-16.py310", []),  # offered: the same version, no line
        (
            "",
            "tf-gpu.2-17.py310",
            [  # the SageMaker default (2.21, Python 3.12): Vertex has nothing newer
                "mapped: image.tensorflow: 2.21 → 2.17 (Vertex AI has no TensorFlow 2.21 image; the nearest it offers, "
                "the newer on a tie; the main request runs it)",
                "mapped: image.python: 3.12 → 3.10 (the Vertex AI TensorFlow 2.17 image has Python 3.10 only)",
            ],
        ),
    ],
)
def test_a_vertex_fallback_of_a_sagemaker_job_keeps_its_tensorflow_where_offered(project, capsys, image, uri, notes):
    result = json_of(capsys, "submit", str(project(SAGEMAKER_MAIN.format(image=image))), "--dry-run")
    (vertex,) = result["fallbacks"]
    assert vertex["request"]["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["executorImageUri"].endswith(
        f"/{uri}:latest"
    )
    assert vertex["notes"] == notes


def test_strict_legacy_refuses_a_fallbacks_mapping_too(capsys):
    code, _, err = run(capsys, "validate", str(REPO / "job_configs" / "fallback.yaml"), "--strict-legacy")
    assert code == 2
    assert err.startswith("error: --strict-legacy: fallback[1]: mapped: image.tensorflow: 2.17 → 2.18 (")


# --- #47: the same version is mapped the same way on every path; image.python too; py3 is Python 3 ------------


@pytest.mark.parametrize(("python", "mapped"), [("py39", "py39 → 3.10"), ("3.12", "3.12 → 3.10"), ("py3", None)])
def test_a_sagemaker_config_moved_to_vertex_maps_its_python_not_refuses_it(python, mapped):
    from cloudtrain.config.load import load_config

    overrides = [
        f"image.python={python}",
        "image.tensorflow=2.11",
        "backend=vertex",
        "region=europe-west4",
        "project=p",
        "staging_bucket=gs://b",
    ]
    loaded = load_config(REPO / "job_configs" / "sagemaker-gpu4.yaml", overrides)
    lines = [n for n in loaded.notes if n.startswith("mapped: image.python")]
    if mapped is None:  # Python 3 as a whole: the image's own, nothing to say
        assert lines == [] and loaded.config.image.python in (None, "py3")
    else:
        assert lines == [f"mapped: image.python: {mapped} (the Vertex AI TensorFlow 2.11 image has Python 3.10 only)"]
        assert loaded.config.image.python is None


@pytest.mark.parametrize(
    ("version", "vertex"), [("2.1", "2.11"), ("1.15", "2.17"), ("2.18", "2.17"), ("2.3.1", "2.11")]
)
def test_one_version_is_mapped_alike_from_a_config_and_from_gclouds_runtime_version(version, vertex):
    from cloudtrain.catalog import crosscloud
    from cloudtrain.config.load import load_config

    loaded = load_config(REPO / "job_configs" / "cpu.yaml", [f"image.tensorflow={version}"])
    assert loaded.config.image.tensorflow == vertex
    chosen, why = crosscloud.mapped_tensorflow(version, catalog.tensorflow_versions("vertex"), "Vertex AI")
    major_minor = ".".join(version.split(".")[:2])
    assert f"mapped: image.tensorflow: {major_minor} → {chosen} ({why})" in loaded.notes and chosen == vertex
