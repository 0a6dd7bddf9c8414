"""Both clouds' servers at once: moto for SageMaker, the Vertex JobService and Cloud Logging fakes."""

from tests.backends.sagemaker.conftest import aws, build_package, moto_session  # noqa: F401
from tests.backends.vertex.conftest import backend, clock, gcs, jobs, logging_fake  # noqa: F401
