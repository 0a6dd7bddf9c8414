"""The catalog is on the --dry-run path: it must not import a cloud SDK or TensorFlow."""

from __future__ import annotations

import subprocess
import sys
import textwrap

HEAVY = (
    "sagemaker",
    "boto3",
    "botocore",
    "google.cloud.aiplatform",
    "google.api_core",
    "google.cloud.storage",
    "tensorflow",
)


def test_catalog_calls_import_no_sdk():
    code = textwrap.dedent(
        f"""
        import sys
        from cloudtrain import catalog
        catalog.resolve_machine("vertex", "n1-standard-16", "NVIDIA_TESLA_T4", 4)
        catalog.resolve_machine("sagemaker", "ml.g4dn.12xlarge", None, 0)
        catalog.training_image("vertex", "us-central1", catalog.default_tensorflow("vertex"), True)
        catalog.training_image("sagemaker", "us-east-1", catalog.default_tensorflow("sagemaker"), True)
        catalog.machines()
        try:
            catalog.resolve_machine("vertex", "n1-standard-32", "NVIDIA_TESLA_V100", 1)
        except catalog.CatalogError:
            pass
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in {{"sagemaker", "boto3", "botocore", "tensorflow"}}
                        or m.startswith({HEAVY!r}))
        print(loaded)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
