"""ML Engine's `trainingInput` format maps to a config; retired hardware maps to the nearest, one line each."""

from __future__ import annotations

import pytest

from cloudtrain.backends.vertex import mlengine as legacy
from cloudtrain.config.load import load_config
from cloudtrain.config.yaml12 import load_yaml
from cloudtrain.errors import ConfigError
from tests.config.golden_files import assert_golden

HEAD = "name: legacy\nproject: p\nstaging_bucket: gs://b\npackage: {path: trainer}\n"
LEGACY_MIN = "project: p\nstaging_bucket: gs://b\ntrainingInput:\n  scaleTier: BASIC\n  region: us-central1\n"


def convert(text: str, file: str = "config_gpu4.yaml"):
    data, notes = legacy.convert(load_yaml(text, file))
    return {"config": data, "notes": notes}


def test_custom_tier_with_accelerator_config(project):
    cfg = load_config(
        project(
            HEAD
            + """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-standard-16
  masterConfig:
    acceleratorConfig: {count: 4, type: NVIDIA_TESLA_T4}
  workerCount: 1
  region: asia-east1
  pythonModule: trainer.task
  args: [--epochs, "3"]
  scheduling: {maxRunningTime: 7200s}
"""
        )
    ).config
    assert (cfg.backend, cfg.region, cfg.machine.type) == ("vertex", "asia-east1", "n1-standard-16")
    assert (cfg.machine.accelerator, cfg.machine.accelerator_count, cfg.replica_count) == ("NVIDIA_TESLA_T4", 4, 2)
    assert (cfg.args, cfg.max_runtime) == (["--epochs", "3"], 7200)


def test_snake_case_keys_and_legacy_names_that_still_exist(project):
    loaded = load_config(
        project(HEAD + "trainingInput: {scale_tier: CUSTOM, master_type: complex_model_m_v100, region: us-central1}\n")
    )
    cfg = loaded.config
    assert (cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count) == (
        "n1-standard-16",
        "NVIDIA_TESLA_V100",
        4,
    )
    # V100 is still offered, but the config now names it differently: one line says what it became
    assert loaded.notes == (
        "mapped: trainingInput.masterType: complex_model_m_v100 (n1-standard-16 with 4 × V100) → "
        "n1-standard-16 with 4 × NVIDIA_TESLA_V100 (ML Engine's name for this machine; Vertex AI "
        "names it by machine type and GPUs); (no current price) → $12.28/h",
    )


# Each legacy machine and tier: what it becomes and the line that says so (golden files).
CASES = {
    "article_config": "trainingInput:\n  scaleTier: CUSTOM\n  master_type: complex_model_m_gpu\n  worker_count: 0\n",
    "basic": "trainingInput: {scaleTier: BASIC}\n",
    "basic_gpu": "trainingInput: {scaleTier: BASIC_GPU}\n",
    "basic_tpu": "trainingInput: {scaleTier: BASIC_TPU}\n",
    "standard_1": "trainingInput: {scaleTier: STANDARD_1}\n",
    "premium_1": "trainingInput: {scaleTier: PREMIUM_1}\n",
    "complex_model_l_gpu": "trainingInput: {scaleTier: CUSTOM, masterType: complex_model_l_gpu}\n",
    "standard_p100": "trainingInput: {scaleTier: CUSTOM, masterType: standard_p100}\n",
    "complex_model_s": "trainingInput: {scaleTier: CUSTOM, masterType: complex_model_s}\n",
    "k80_accelerator_config": "trainingInput:\n  scaleTier: CUSTOM\n  masterType: n1-standard-8\n  masterConfig:\n"
    "    acceleratorConfig: {type: NVIDIA_TESLA_K80, count: 2}\n",
    "custom_parameter_servers": "trainingInput: {scaleTier: CUSTOM, masterType: large_model, workerCount: 2, "
    "workerType: large_model, parameterServerCount: 1, parameterServerType: standard}\n",
    "runtime_2_1_python_3_7": "trainingInput: {scaleTier: BASIC, runtimeVersion: '2.1', pythonVersion: '3.7'}\n",
    "job_dir_and_module": "trainingInput: {scaleTier: BASIC, jobDir: 'gs://b/jobs/run1/', pythonModule: trainer.task, "
    "runtimeVersion: '2.15', pythonVersion: '3.10'}\n",
    "sagemaker_article": "backend: sagemaker\ntrainingInput:\n  scaleTier: CUSTOM\n  master_type: complex_model_m_gpu\n"
    "  runtimeVersion: '2.17'\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_translation_matches_golden(name):
    assert_golden(f"legacy_{name}", convert(CASES[name]))


def test_article_config_maps_k80_to_t4_at_the_same_count_with_the_price():
    out = convert(CASES["article_config"])
    assert out["config"]["machine"] == {
        "type": "n1-standard-16",
        "accelerator": "NVIDIA_TESLA_T4",
        "accelerator_count": 4,
    }
    (note,) = out["notes"]
    assert "K80" in note and "T4" in note and note.endswith("; (no current price) → $2.48/h")


def test_eight_k80_become_the_nearest_count_of_t4_and_say_so():
    out = convert(CASES["complex_model_l_gpu"])
    assert out["config"]["machine"]["accelerator_count"] == 4
    assert "8 × T4 is not offered, 4 is the nearest count" in out["notes"][0]


def test_parameter_servers_become_workers():
    out = convert(CASES["standard_1"])
    assert out["config"]["replica_count"] == 8  # 1 master + 4 workers + 3 parameter servers
    assert (
        "mapped: trainingInput.scaleTier: 3 parameter servers → 8 replicas of the master's machine (parameter "
        "servers become workers: MultiWorkerMirroredStrategy all-reduces, with no parameter servers)" in out["notes"]
    )
    one = convert(CASES["custom_parameter_servers"])
    assert any(
        n.startswith("mapped: trainingInput.parameterServerCount: 1 parameter server → 4 replicas")
        for n in one["notes"]
    )


def test_tf1_runtime_maps_as_a_configs_tensorflow_does_with_a_line():
    out = convert("trainingInput: {scaleTier: BASIC, runtimeVersion: '1.10'}\n")
    assert out["config"]["image"] == {"tensorflow": "2.17"}  # the newest Vertex AI image, as image.tensorflow: 1.10
    assert out["notes"][1] == (
        "mapped: trainingInput.runtimeVersion: 1.10 → 2.17 (TensorFlow 1 has no prebuilt Vertex AI image any more; "
        "the newest TF 2 one; TF 1 code needs tf.compat.v1 or a port)"
    )


def test_strict_legacy_turns_a_mapping_into_an_error(project):
    with pytest.raises(ConfigError) as info:
        load_config(
            project(HEAD + "trainingInput: {masterType: complex_model_m_gpu, region: us-central1}\n"), strict=True
        )
    assert info.value.file == "--strict-legacy" and "K80" in str(info.value)


def test_master_type_with_a_fixed_tier_is_read_as_custom_with_a_line():
    out = convert("trainingInput:\n  scaleTier: BASIC\n  master_type: complex_model_m_gpu\n")
    assert out["config"]["machine"]["accelerator_count"] == 4
    assert out["notes"][0].startswith("mapped: trainingInput.scaleTier: BASIC → CUSTOM (masterType complex_model_m_gpu")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("trainingInput: {scaleTier: BASIC, packageUris: ['gs://b/p.tar.gz']}\n", "packageUris"),
        ("trainingInput: {scaleTier: BASIC, evaluatorCount: 1}\n", "evaluators"),
        (
            "trainingInput: {scaleTier: CUSTOM, masterType: standard, workerCount: 1, workerType: large_model}\n",
            "same machine",
        ),
        ("trainingInput: {scaleTier: BASIC, bogus: 1}\n", "unknown trainingInput key"),
        ("trainingInput: {scaleTier: SUPER}\n", "unknown scaleTier"),
    ],
)
def test_what_cannot_map_is_one_line(text, message):
    with pytest.raises(ConfigError, match=message):
        convert(text)


def test_set_changes_a_legacy_key(project):
    path = project(HEAD + "trainingInput: {scaleTier: CUSTOM, masterType: standard_p100, region: us-central1}\n")
    cfg = load_config(path, ["trainingInput.masterType=standard_v100"]).config
    assert (cfg.machine.accelerator, cfg.machine.accelerator_count) == ("NVIDIA_TESLA_V100", 1)


def test_shipped_legacy_example_loads():
    from tests.conftest import REPO

    cfg = load_config(REPO / "job_configs" / "legacy-mlengine.yaml").config
    assert (cfg.region, cfg.machine.accelerator_count) == ("asia-east1", 4)


def test_a_short_file_name_gives_a_valid_default_name(project):
    path = project(LEGACY_MIN, name="v.yaml")
    assert load_config(path).config.name == "v"


def test_top_level_region_that_disagrees_with_training_input_is_an_error(project):
    path = project("region: us-east1\n" + LEGACY_MIN)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == "region" and "us-east1" in str(info.value) and "us-central1" in str(info.value)
    assert load_config(path, ["region=us-east1"]).config.region == "us-east1"  # --set decides without a word
