"""Both clouds' servers at once: moto for SageMaker, the Vertex JobService and Cloud Logging fakes."""

from tests.backends.sagemaker.conftest import build_package  # noqa: F401 — aws: tests/fakes/fixtures.py
from tests.backends.vertex.conftest import backend, clock, gcs, jobs, logging_fake  # noqa: F401
