"""The request of a job with ``tensorboard:`` equals, field for field, what the Vertex AI SDK (the pinned
google-cloud-aiplatform) sends for the same job with ``CustomJob.submit(service_account=…, tensorboard=…)``:
the SDK is run offline, its client replaced at the edge (``create_custom_job``) to keep what it would send.

Imports the Vertex AI SDK (seconds), hence slow."""

from __future__ import annotations

from typing import Any

import pytest

from cloudtrain.backends.vertex import BACKEND
from cloudtrain.backends.vertex.job_settings import VertexSettings
from tests.backends.vertex.conftest import make_spec

pytestmark = pytest.mark.slow

CASES = {
    "europe-west4": dict(
        region="europe-west4",
        project="team-ml",
        output_dir="gs://team-bucket/runs/demo-20240501-120000",
        tensorboard="projects/team-ml/locations/europe-west4/tensorboards/8123",
        backend_settings=VertexSettings(service_account="trainer@team-ml.iam.gserviceaccount.com"),
    ),
    "us-central1, experiment, one replica": dict(
        region="us-central1",
        replica_count=1,
        tensorboard="projects/123456789/locations/us-central1/tensorboards/77",
        experiment="baseline-2",
        backend_settings=VertexSettings(service_account="sa@my-project.iam.gserviceaccount.com"),
    ),
}


def sdk_request(body: dict[str, Any], project: str, region: str) -> dict[str, Any]:
    """What the SDK sends for the job ``body`` describes (display name, pools, base output dir, labels as
    the constructor takes them; service account, TensorBoard and timeout as ``submit`` takes them)."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import aiplatform
    from google.cloud.aiplatform.compat.types import custom_job as gca  # type: ignore[attr-defined]
    from google.protobuf import json_format

    job_spec = body["jobSpec"]
    parsed = json_format.ParseDict(job_spec, gca.CustomJobSpec.pb(gca.CustomJobSpec()))
    pools = [json_format.MessageToDict(p, preserving_proto_field_name=True) for p in parsed.worker_pool_specs]
    job = aiplatform.CustomJob(
        display_name=body["displayName"],
        worker_pool_specs=pools,
        base_output_dir=job_spec["baseOutputDirectory"]["outputUriPrefix"],
        project=project,
        location=region,
        credentials=AnonymousCredentials(),
        labels=body["labels"],
        staging_bucket="gs://unused-staging",
    )
    sent: dict[str, Any] = {}

    class Edge:  # the SDK's JobServiceClient, as far as submit reaches it
        def create_custom_job(self, parent: str, custom_job: Any, timeout: Any = None) -> Any:
            sent["parent"], sent["job"] = parent, type(custom_job).serialize(custom_job)
            created = type(custom_job).deserialize(sent["job"])
            created.name = f"{parent}/customJobs/1"  # what the service answers: the SDK then logs its link
            return created

    job.api_client = Edge()  # type: ignore[assignment]  # the SDK's client, at its edge
    job.submit(
        service_account=job_spec["serviceAccount"],
        tensorboard=job_spec["tensorboard"],
        timeout=int(job_spec["scheduling"]["timeout"].rstrip("s")),
    )
    assert sent["parent"] == f"projects/{project}/locations/{region}"
    return json_format.MessageToDict(gca.CustomJob.pb(gca.CustomJob.deserialize(sent["job"])))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_request_is_what_the_vertex_ai_sdk_sends(case, package) -> None:
    spec = make_spec(**CASES[case])
    body = BACKEND.render(spec, package)
    assert body["jobSpec"]["tensorboard"] == spec.tensorboard
    assert sdk_request(body, spec.project or "", spec.region) == body
