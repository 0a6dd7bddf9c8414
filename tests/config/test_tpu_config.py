"""TPU configs on Vertex AI: checked offline, one line per problem, the nearest valid choice named."""

from __future__ import annotations

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from cloudtrain.spec import build_spec
from tests.conftest import SAGEMAKER_BASE

TPU_BASE = """\
name: demo
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
package:
  path: trainer
  module: trainer.task
"""


def errors_of(path) -> list[ConfigError]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return list(getattr(info.value, "errors", None) or (info.value,))


def test_v5e_config_builds_a_tpu_spec_on_the_tpu_image(project):
    spec = build_spec(load_config(project(TPU_BASE + "machine: {type: ct5lp-hightpu-4t}\n")))
    m = spec.machine
    assert (m.type, m.accelerator, m.accelerator_count, m.tpu_cores, m.tpu_topology) == (
        "ct5lp-hightpu-4t",
        "TPU_V5_LITEPOD",
        4,
        4,
        "2x2",
    )
    assert spec.image_uri == "us-docker.pkg.dev/vertex-ai/training/tf-tpu.2-15.cp310:latest"
    assert m.accelerators == "4 TPU cores (TPU_V5_LITEPOD, 2x2)"


@pytest.mark.parametrize(
    "extra, field, words",
    [
        (
            "region: asia-east1\nmachine: {type: ct5lp-hightpu-4t}\n",
            "region",
            "Vertex AI offers TPU_V5_LITEPOD (TPU v5e) in europe-west4, us-west1, us-west4, us-central1, "
            "not asia-east1",
        ),
        (
            "machine: {type: ct5lp-hightpu-4t, tpu_topology: 4x4}\n",
            "machine.tpu_topology",
            "tpu_topology 4x4 spans several TPU VMs",
        ),
        (
            "machine: {type: ct5lp-hightpu-4t}\nreplica_count: 2\n",
            "replica_count",
            "replica_count 2 asks for several TPU VMs",
        ),
        (
            "machine: {type: ct5lp-hightpu-4t}\nimage: {tensorflow: '2.14'}\n",
            "image.tensorflow",
            "TPUs need TensorFlow 2.15 or newer",
        ),
        (
            "machine: {type: ct5lp-hightpu-4t}\nimage: {tensorflow: '2.17'}\n",
            "image.tensorflow",
            "no prebuilt TensorFlow 2.17 image for TPUs",
        ),
        (
            "machine: {type: ct5lp-hightpu-4t, accelerator: NVIDIA_TESLA_T4, accelerator_count: 1}\n",
            "machine.accelerator",
            "TPUs and GPUs never share a machine",
        ),
        (
            "machine: {type: cloud-tpu, accelerator: TPU_V3, accelerator_count: 32}\n",
            "machine.accelerator_count",
            "pod slice over several TPU VMs",
        ),
    ],
)
def test_bad_tpu_config_is_one_line_on_the_field(project, extra, field, words):
    text = TPU_BASE.replace("region: us-central1\n", "") if extra.startswith("region:") else TPU_BASE
    (error,) = errors_of(project(text + extra))
    assert error.field == field and words in str(error.detail)
    assert "\n" not in error.detail and error.line is not None


def test_custom_tpu_image_skips_the_image_table_but_not_the_version_rule(project):
    ok = TPU_BASE + "machine: {type: ct5lp-hightpu-1t}\nimage: {uri: 'us-docker.pkg.dev/p/r/tf-libtpu:2.17'}\n"
    assert build_spec(load_config(project(ok))).image_uri.endswith("tf-libtpu:2.17")


def test_sagemaker_with_a_tpu_says_it_has_none(project):
    text = SAGEMAKER_BASE.split("machine:")[0] + "machine: {type: ct5lp-hightpu-4t}\npackage: {path: trainer}\n"
    (error,) = errors_of(project(text))
    assert error.field == "machine.type" and "SageMaker has no TPUs" in error.detail and "fallback:" in error.detail


def test_checking_a_tpu_config_imports_no_cloud_sdk(project):
    """The backend's facts (its runtime limit, #29) are read through the registry; its cloud SDK is not imported."""
    import subprocess
    import sys

    path = project(TPU_BASE + "machine: {type: ct5lp-hightpu-4t}\n")
    code = (
        "import sys\nfrom cloudtrain.config.load import load_config\n"
        f"load_config({str(path)!r})\n"
        "print(sorted(m for m in sys.modules if m.startswith(('google.cloud.', 'boto'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
