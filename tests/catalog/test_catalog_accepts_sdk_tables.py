"""The catalog accepts what the clouds accept, as the pinned libraries' own tables say: every TensorFlow
training image in sagemaker-core's image table, every instance type in botocore's SageMaker
``TrainingInstanceType`` (the CreateTrainingJob enum), Python 3 as the SageMaker SDK spells it (``py3``).
A table that grows in a library upgrade fails here until the catalog's generator is run again."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cloudtrain import catalog
from cloudtrain.catalog._data import load

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import sagemaker_instance_types as generator  # type: ignore[import-not-found]  # noqa: E402


def _sagemaker_tensorflow_table() -> dict:
    spec = importlib.util.find_spec("sagemaker")
    assert spec is not None and spec.submodule_search_locations is not None
    root = Path(list(spec.submodule_search_locations)[0])
    return json.loads((root / "core" / "image_uri_config" / "tensorflow.json").read_text())["training"]


def test_every_training_instance_type_botocore_accepts_resolves():
    refused = load("sagemaker")["_without_gpu_facts"]
    accepted = generator.enum()
    assert len(accepted) > 200 and "ml.c4.xlarge" in accepted
    for name in accepted:
        if name in refused:
            continue
        m = catalog.resolve_machine("sagemaker", name, None, None)
        assert m.machine_type == name and m.vcpus > 0 and m.memory_gb > 0
    # what is still refused is only GPU types whose GPU the catalog lacks, named with why
    assert all(generator.re.match(r"ml\.[pg]\d", name) for name in refused)
    assert len(refused) < 25


@pytest.mark.parametrize(
    ("name", "vcpus", "memory", "gpus"),
    [
        ("ml.c4.xlarge", 4, 7.5, 0),
        ("ml.c4.8xlarge", 36, 60, 0),
        ("ml.r5.2xlarge", 8, 64, 0),
        ("ml.t3.medium", 2, 4, 0),
        ("ml.p5.4xlarge", 16, 256, 1),
        ("ml.m7i.48xlarge", 192, 768, 0),
    ],
)
def test_added_types_have_their_ec2_facts(name, vcpus, memory, gpus):
    m = catalog.resolve_machine("sagemaker", name, None, None)
    assert (m.vcpus, m.memory_gb, m.accelerator_count) == (vcpus, memory, gpus)
    assert m.price_per_hour is None  # never guessed: the cost line says it is unknown


def test_every_accepted_gpu_type_has_its_gpu_facts():
    """A GPU instance type the catalog accepts has its GPUs (count, model, memory), as the pinned SDK's table says
    where it lists the type (sagemaker-core's instance_gpu_info.json), else the documented source in the data."""
    table = generator.gpu_memory_mib()
    data = load("sagemaker")
    accepted = [t for s in data["series"].values() for t in s["types"] if generator.re.match(r"ml\.[pg]\d", t)]
    assert {"ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.g5.xlarge"} <= set(accepted) and len(accepted) >= 40
    for name in accepted:
        m = catalog.resolve_machine("sagemaker", name, None, None)
        assert m.accelerator_count > 0 and m.gpu is not None and m.gpu.memory_gb > 0, name
        if name in table:  # the SDK's own count and memory per GPU
            count, mib = table[name]
            assert m.accelerator_count == count and abs(m.gpu.memory_gb * 1024 - mib / count) / (mib / count) < 0.1, (
                name
            )
    h200 = catalog.resolve_machine("sagemaker", "ml.p5en.48xlarge", None, None)
    assert h200.gpu is not None and (h200.accelerator_count, h200.gpu.name, h200.gpu.memory_gb) == (8, "H200", 141)
    assert "read 2026-12-02" in data["_source"]["estimated_series"]


@pytest.mark.parametrize(
    ("name", "gpus", "model", "memory", "vcpus", "host_memory"),
    [  # aws/sagemaker-hyperpod-cli's INSTANCE_RESOURCES and its whole-GPU MIG profiles (gpus.json's _source)
        ("ml.p6-b200.48xlarge", 8, "B200", 180, 192, 2048),
        ("ml.p6e-gb200.36xlarge", 4, "GB200", 186, 144, 960),
        ("ml.p6-b300.48xlarge", 8, "B300", 269, 192, 4096),
        ("ml.g7e.2xlarge", 1, "RTX-PRO-6000", 96, 8, 64),
        ("ml.g7e.12xlarge", 2, "RTX-PRO-6000", 96, 48, 512),
        ("ml.g7e.48xlarge", 8, "RTX-PRO-6000", 96, 192, 2048),
    ],
)
def test_blackwell_types_have_their_gpu_facts(name, gpus, model, memory, vcpus, host_memory):
    m = catalog.resolve_machine("sagemaker", name, None, None)
    assert m.gpu is not None and (m.accelerator_count, m.gpu.name, m.gpu.memory_gb) == (gpus, model, memory)
    assert (m.vcpus, m.memory_gb, m.price_per_hour) == (vcpus, host_memory, None)


@pytest.mark.parametrize(
    ("name", "count", "instead"),
    [
        ("ml.p2.xlarge", 1, "ml.g4dn.4xlarge (1 × T4)"),
        ("ml.p2.8xlarge", 8, "ml.g4dn.12xlarge (4 × T4)"),
        ("ml.p2.16xlarge", 16, "ml.g4dn.12xlarge (4 × T4)"),
    ],
)
def test_a_kepler_type_is_refused_in_one_line_saying_why_and_naming_its_replacement(name, count, instead):
    with pytest.raises(catalog.CatalogError) as refused:
        catalog.resolve_machine("sagemaker", name, None, None)
    assert str(refused.value) == (
        f"{name} is refused: its {count} x K80 are Kepler GPUs (compute capability 3.7): SageMaker's TensorFlow "
        "images from 2.16 on are built with CUDA 12, which does not run on Kepler, and the catalog keeps no Kepler "
        f"GPU; use {instead}, the machine ML Engine's K80 maps to"
    )
    assert catalog.resolve_machine("sagemaker", instead.split()[0], None, None).gpu.name == "T4"  # type: ignore[union-attr]


def test_validate_and_the_dry_run_accept_a_blackwell_type_with_its_accelerator_line(tmp_path):
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "__init__.py").write_text("")
    (tmp_path / "trainer" / "task.py").write_text("print('hi')\n")
    config = tmp_path / "job.yaml"
    config.write_text(
        "name: b200\nbackend: sagemaker\nregion: us-east-1\nmachine: {type: ml.p6-b200.48xlarge}\n"
        "package: {path: trainer, module: trainer.task}\nrole_arn: arn:aws:iam::123456789012:role/SageMakerRole\n"
        "staging_bucket: s3://my-bucket\n"
    )
    cli = [sys.executable, "-m", "cloudtrain"]
    validated = subprocess.run([*cli, "validate", "--config", str(config)], capture_output=True, text=True, timeout=120)
    assert validated.returncode == 0, validated.stderr
    assert "(sagemaker, us-east-1, ml.p6-b200.48xlarge, 8 × B200, 1 replica)" in validated.stdout
    dry = subprocess.run(
        [*cli, "submit", "--dry-run", "--config", str(config)], capture_output=True, text=True, timeout=120
    )
    assert dry.returncode == 0 and "machine: ml.p6-b200.48xlarge, 8 × B200" in dry.stdout + dry.stderr, dry.stderr


def test_the_generator_has_nothing_left_to_add():
    data = load("sagemaker")
    added, refused = generator.additions(data)
    assert added == {} and refused == data["_without_gpu_facts"]


def test_every_tensorflow_image_in_sagemaker_cores_table_is_accepted():
    table = _sagemaker_tensorflow_table()
    versions = [v for v, c in table["versions"].items() if "repository" in c and not v.startswith("1.")]
    assert {"2.1.0", "2.2.0", "2.3.1", "2.11.0"} <= set(versions)
    for version in versions:
        config = table["versions"][version]
        region = "us-east-1" if "us-east-1" in config["registries"] else sorted(config["registries"])[0]
        for py in config.get("py_versions") or [None]:
            uri = catalog.training_image("sagemaker", region, version, gpu=False, py_version=py)
            assert f"/tensorflow-training:{version}-cpu" in uri or f":{version}" in uri, uri


@pytest.mark.parametrize(("version", "tag"), [("2.1.0", "py3"), ("2.2", "py37"), ("2.3.1", "py37"), ("2.19", "py312")])
def test_py3_means_python_3_not_pypy3(version, tag):
    uri = catalog.training_image("sagemaker", "eu-west-1", version, gpu=True, py_version=catalog.python_tag("py3"))
    assert uri.endswith(f"-gpu-{tag}"), uri
    assert catalog.python_tag("py3") == "py3" and catalog.python_tag("3.10") == "py310"
    assert catalog.python_tag("py39") == "py39"
