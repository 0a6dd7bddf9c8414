"""`--set backend=sagemaker` (and back): one function maps machine, region and TF version, one line each."""

from __future__ import annotations

import pytest

from cloudtrain import catalog
from cloudtrain.backend_rules import LOCAL, sections
from cloudtrain.catalog import crosscloud as nearest
from cloudtrain.catalog._data import load
from cloudtrain.config.crosscloud import Refused, fit_to_cloud
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from cloudtrain.spec import build_spec
from tests.config.golden_files import assert_golden
from tests.conftest import REPO

TO_SAGEMAKER = [
    "backend=sagemaker",
    "role_arn=arn:aws:iam::123456789012:role/SageMakerRole",
    "staging_bucket=s3://my-bucket",
]


@pytest.mark.parametrize("name", ["gpu4", "legacy-mlengine", "multiworker", "cpu"])
def test_shipped_vertex_configs_on_sagemaker_match_golden(name):
    loaded = load_config(REPO / "job_configs" / f"{name}.yaml", TO_SAGEMAKER)
    spec = build_spec(loaded)
    assert_golden(
        f"crosscloud_{name}_to_sagemaker",
        {
            # a backend's section the config leaves out is not part of the translation (the registry's: any backend)
            "config": loaded.config.model_dump(exclude={"package", *(n for n in sections() if n != LOCAL)}),
            "notes": list(loaded.notes),
            "image": spec.image_uri,
            "machine": [spec.machine.type, spec.machine.gpu_model, spec.machine.accelerator_count],
        },
    )


def test_gpu4_on_sagemaker_takes_g4dn_the_nearest_region_and_tf_2_18():
    loaded = load_config(REPO / "job_configs" / "gpu4.yaml", TO_SAGEMAKER)
    cfg = loaded.config
    assert (cfg.machine.type, cfg.region, cfg.image.tensorflow) == ("ml.g4dn.12xlarge", "us-east-2", "2.18")
    assert len(loaded.notes) == 3 and loaded.notes[2].startswith("mapped: image.tensorflow: 2.17 → 2.18 (")


def test_sagemaker_config_on_vertex():
    loaded = load_config(
        REPO / "job_configs" / "sagemaker-gpu4.yaml",
        ["backend=vertex", "project=p", "staging_bucket=gs://b", "hyperparameters={}"],
    )
    cfg = loaded.config
    assert (cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count) == (
        "n1-standard-64",
        "NVIDIA_TESLA_T4",
        4,
    )
    assert cfg.region == "us-east4" and cfg.image.tensorflow == "2.16"  # Vertex has 2.16 too: no line for it
    assert len(loaded.notes) == 2


def test_a_native_config_on_its_own_cloud_is_left_alone():
    data = {
        "backend": "vertex",
        "region": "us-central1",
        "machine": {"type": "n1-standard-16"},
        "image": {"tensorflow": "2.17"},
    }
    assert fit_to_cloud(data, "vertex") == (data, [])


@pytest.mark.parametrize(
    ("key", "value"),
    [("staging_bucket", "gs://b"), ("output_dir", "gs://b/out"), ("job_dir", "gs://b/job")],
)
def test_a_bucket_of_the_other_cloud_is_refused_with_the_fix(key, value):
    with pytest.raises(Refused) as info:
        fit_to_cloud({"backend": "sagemaker", key: value}, "sagemaker")
    assert info.value.path == (key,) and "s3://" in info.value.hint


def test_a_data_channel_in_the_other_clouds_bucket_is_refused_not_copied():
    with pytest.raises(ConfigError) as info:
        load_config(REPO / "job_configs" / "gpu4.yaml", [*TO_SAGEMAKER, "data={train: gs://my-bucket/digits}"])
    assert info.value.field == "data.train" and "s3://" in str(info.value)


def test_images_of_the_other_registry():
    uri = "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-16.py310:latest"
    out, notes = fit_to_cloud({"image": {"uri": uri}}, "sagemaker")
    assert out["image"] == {"tensorflow": "2.16"} and "TensorFlow 2.16" in notes[0]
    with pytest.raises(Refused, match="registry"):
        fit_to_cloud({"image": {"uri": "us-docker.pkg.dev/my-proj/repo/trainer:1"}}, "sagemaker")


def test_refusal_is_one_config_line(project):
    with pytest.raises(ConfigError) as info:
        load_config(
            REPO / "job_configs" / "gpu4.yaml", ["backend=sagemaker", "role_arn=arn:aws:iam::123456789012:role/R"]
        )
    assert info.value.field == "staging_bucket" and "--set staging_bucket=s3://" in str(info.value)


def test_region_table_covers_every_region_both_ways():
    data = load("crosscloud")
    assert set(data["google_to_aws"]) == set(catalog.regions("vertex"))
    assert set(data["aws_to_google"]) == set(catalog.regions("sagemaker"))
    assert set(data["google_to_aws"].values()) <= set(catalog.regions("sagemaker"))
    assert set(data["aws_to_google"].values()) <= set(catalog.regions("vertex"))


@pytest.mark.parametrize(
    ("cloud", "gpu", "count", "expected"),
    [
        ("vertex", "K80", 4, ("n1-standard-16", "T4", 4)),
        ("vertex", "K80", 8, ("n1-standard-32", "T4", 4)),  # no 8 × T4 on N1: the nearest count
        ("vertex", "P100", 4, ("n1-standard-16", "P100", 4)),  # still offered: kept
        ("sagemaker", "P100", 1, ("ml.g4dn.2xlarge", "T4", 1)),  # no P100: cheapest at least as fast
        ("sagemaker", "A100", 4, ("ml.p4d.24xlarge", "A100", 8)),  # A100 comes 8 to an instance
        ("sagemaker", "L4", 1, ("ml.g6.2xlarge", "L4", 1)),
    ],
)
def test_nearest_machine(cloud, gpu, count, expected):
    shape = {"vertex": (16, 60), "sagemaker": (8, 30)}[cloud] if count <= 4 else (32, 120)
    found = nearest.nearest_machine(cloud, gpu, count, *shape)
    assert found.gpu is not None
    assert (found.machine_type, found.gpu.name, found.accelerator_count) == expected


def test_every_offered_gpu_is_at_least_as_fast_as_k80_and_ranked():
    assert nearest.replacement_gpu("vertex", "K80") == "T4"
    assert nearest.replacement_gpu("sagemaker", "K80") == "T4"
    assert nearest.replacement_gpu("vertex", "TPU_V2") == "A100"
