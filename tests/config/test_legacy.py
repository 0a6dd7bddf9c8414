"""ML Engine's `trainingInput` format maps to a Vertex config; retired machines name a replacement."""

from __future__ import annotations

import pytest

from cloudtrain.config import load_config
from cloudtrain.errors import ConfigError

HEAD = "name: legacy\nproject: p\nstaging_bucket: gs://b\npackage: {path: trainer}\n"


def test_custom_tier_with_accelerator_config(project):
    cfg = load_config(project(HEAD + """\
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
""")).config
    assert (cfg.backend, cfg.region, cfg.machine.type) == ("vertex", "asia-east1", "n1-standard-16")
    assert (cfg.machine.accelerator, cfg.machine.accelerator_count, cfg.replica_count) == ("NVIDIA_TESLA_T4", 4, 2)
    assert (cfg.args, cfg.max_runtime) == (["--epochs", "3"], 7200)


def test_snake_case_keys_and_legacy_names(project):
    cfg = load_config(project(HEAD + "trainingInput: {scale_tier: CUSTOM, master_type: complex_model_m_v100, region: us-central1}\n")).config
    assert (cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count) == ("n1-standard-16", "NVIDIA_TESLA_V100", 4)


def test_retired_k80_machine_names_replacement(project):
    # The first source article's config: scaleTier BASIC, master_type complex_model_m_gpu.
    with pytest.raises(ConfigError) as info:
        load_config(project(HEAD + "trainingInput:\n  scaleTier: CUSTOM\n  master_type: complex_model_m_gpu\n  region: us-central1\n"))
    message = str(info.value)
    assert info.value.line == 7 and "K80" in message and "n1-standard-16" in message and "NVIDIA_TESLA_T4" in message


def test_parameter_servers_are_refused(project):
    with pytest.raises(ConfigError, match="parameter servers"):
        load_config(project(HEAD + "trainingInput: {masterType: n1-standard-8, parameterServerCount: 2, region: us-central1}\n"))


def test_tf1_runtime_is_refused(project):
    with pytest.raises(ConfigError, match="TensorFlow 1"):
        load_config(project(HEAD + "trainingInput: {masterType: n1-standard-8, runtimeVersion: '1.10', region: us-central1}\n"))


def test_shipped_legacy_example_loads():
    from tests.conftest import REPO

    cfg = load_config(REPO / "job_configs" / "legacy-mlengine.yaml").config
    assert (cfg.region, cfg.machine.accelerator_count) == ("asia-east1", 4)
