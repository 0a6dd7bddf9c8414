"""JobSpec → Vertex AI ``CustomJob`` request, as the REST JSON that ``--dry-run`` prints.

Pure functions on plain dicts, no cloud SDK, so a dry run stays fast. The dict is canonical proto3 JSON (camelCase,
int64 as strings), exactly what ``submit`` parses into ``aiplatform_v1.CustomJob`` (tests parse it with unknown
fields rejected). A ``package.script`` job is a ``pythonPackageSpec`` too: the prebuilt image installs the package
built around the folder as it installs any package, and its ``pythonModule`` is a launcher that runs the script
(:mod:`cloudtrain.packaging.script_main`); a ``containerSpec`` would need its own download inside an image whose
tools we do not control. A ``container:`` job is a ``containerSpec``: the user's image, command and args."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from cloudtrain.backends.vertex import tpu
from cloudtrain.backends.vertex.job_settings import vertex_settings
from cloudtrain.data import gcs_fuse_path
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.packaging.script import PACKAGE as SCRIPT_MODULE  # python -m cloudtrain_script
from cloudtrain.secrets import job as secrets_job
from cloudtrain.spec import JobSpec

SUBMIT_ID_LABEL = "cloudtrain-submit-id"
EXPERIMENT_LABEL = "cloudtrain-experiment"  # the config's experiment: (a Vertex label value)
BOOT_DISK_TYPE = "pd-ssd"
_NAME = re.compile(r"^projects/([^/]+)/locations/([^/]+)/customJobs/([^/]+)$")


def package_uri(spec: JobSpec, package: BuiltPackage) -> str:
    """Where the sdist lives: content-addressed, so an unchanged package is uploaded once."""
    prefix = spec.package_prefix or ""
    if not prefix.startswith("gs://"):
        raise UsageError(
            f"staging_bucket must be a gs:// URI for Vertex AI, got {spec.staging_bucket or spec.job_dir!r}",
            hint="set staging_bucket: gs://YOUR-BUCKET (or job_dir: gs://…) in the config",
        )
    return f"{prefix}/{package.sha256}/{package.filename}"


def channel_env(spec: JobSpec) -> dict[str, str]:
    """``SM_CHANNEL_<NAME>``: each channel's Cloud Storage FUSE path (``/gcs/bucket/path``)."""
    return {ch.env_name: gcs_fuse_path(ch.cloud_uri) for ch in spec.channels.values()}


def model_dir(spec: JobSpec) -> str:
    """``AIP_MODEL_DIR`` of the job: ``<baseOutputDirectory>/model/``."""
    return f"{spec.output_dir.rstrip('/')}/model/"


def script_env(spec: JobSpec) -> dict[str, str]:
    """Script jobs: the SageMaker variable known before the job starts (``SM_NUM_GPUS``); the
    launcher derives ``SM_HOSTS``, ``SM_CURRENT_HOST``, ``SM_MODEL_DIR`` and ``SM_OUTPUT_DATA_DIR``
    on each replica from what Vertex sets there."""
    gpus = 0 if spec.machine.tpu_cores else spec.machine.accelerator_count  # a TPU VM has no GPU
    return {"SM_NUM_GPUS": str(gpus)} if spec.package.script else {}


def submit_id(spec: JobSpec, package: BuiltPackage | None) -> str:
    """A label value unique to this submit, derived from it so that ``render`` stays pure; ``create`` looks
    for a job carrying it before retrying, so a lost response never becomes a second job."""
    code = spec.container.image_uri if spec.container else required(package, spec.job_name).sha256
    key = "\n".join((spec.project or "", spec.region, spec.job_name, spec.created.isoformat(), code))
    return hashlib.sha256(key.encode()).hexdigest()[:20]


def render_custom_job(spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
    """The ``CustomJob`` body of ``projects.locations.customJobs.create``, in REST JSON. A ``container:``
    job (``package`` None) gets a ``containerSpec``; a package job a ``pythonPackageSpec``."""
    machine: dict[str, Any] = {"machineType": spec.machine.type}
    if spec.machine.tpu_cores:
        machine = tpu.machine_spec(
            spec.machine.type,
            spec.machine.accelerator,
            spec.machine.accelerator_count,
            spec.machine.tpu_topology,
            spec.replica_count,
        )
    elif spec.machine.accelerator and spec.machine.accelerator_count:
        machine["acceleratorType"] = spec.machine.accelerator
        machine["acceleratorCount"] = spec.machine.accelerator_count
    code_key, code = _code(spec, package)

    def pool(replicas: int) -> dict[str, Any]:
        return {
            "machineSpec": dict(machine),
            "replicaCount": str(replicas),  # int64: a string in proto3 JSON
            "diskSpec": {"bootDiskType": BOOT_DISK_TYPE, "bootDiskSizeGb": spec.machine.disk_gb},
            code_key: {k: (list(v) if isinstance(v, list) else v) for k, v in code.items()},
        }

    # Pool 0 is the chief (exactly one replica); pool 1 holds the other workers, same machine.
    pools = [pool(1)] + ([pool(spec.replica_count - 1)] if spec.replica_count > 1 else [])
    scheduling: dict[str, Any] = {"timeout": f"{spec.max_runtime_seconds}s"}
    settings = vertex_settings(spec)
    if spec.spot:
        scheduling["strategy"] = "SPOT"
    elif settings.flex_start:  # the same enum: one or the other (the config checks refuse both)
        scheduling["strategy"] = "FLEX_START"
        if settings.flex_max_wait_seconds:
            scheduling["maxWaitDuration"] = f"{settings.flex_max_wait_seconds}s"
    job_spec: dict[str, Any] = {"workerPoolSpecs": pools, "scheduling": scheduling}
    if settings.service_account:
        job_spec["serviceAccount"] = settings.service_account
    if settings.network:
        job_spec["network"] = settings.network
    # AIP_CHECKPOINT_DIR is <base>/checkpoints: a resumed job writes under the job's base it continues.
    base = spec.resume.output_dir if spec.resume and spec.resume.output_dir else spec.output_dir
    job_spec["baseOutputDirectory"] = {"outputUriPrefix": base}
    if isinstance(spec.tensorboard, str):  # the CustomJob.run(tensorboard=…) of the Vertex AI SDK
        job_spec["tensorboard"] = spec.tensorboard
    labels = dict(spec.labels)
    if spec.experiment:
        labels.setdefault(EXPERIMENT_LABEL, spec.experiment)
    labels[SUBMIT_ID_LABEL] = submit_id(spec, package)
    return {"displayName": spec.job_name, "jobSpec": job_spec, "labels": labels}


def _code(spec: JobSpec, package: BuiltPackage | None) -> tuple[str, dict[str, Any]]:
    """``containerSpec`` (the user's image, command and args) or ``pythonPackageSpec`` (the staged sdist)."""
    code: dict[str, Any]
    if spec.container:
        code = {"imageUri": spec.container.image_uri}
        if spec.container.command:
            code["command"] = list(spec.container.command)
    else:
        code = {
            "executorImageUri": spec.image_uri,
            "packageUris": [package_uri(spec, required(package, spec.job_name))],
            "pythonModule": secrets_job.PACKAGE if spec.secrets else python_module(spec),
        }
    args = list(spec.script_args(model_dir(spec)) if spec.package.script else spec.module_args())
    if args:
        code["args"] = args
    env = {**spec.env, **channel_env(spec), **script_env(spec), **secrets_env(spec)}
    if env:
        code["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return ("containerSpec" if spec.container else "pythonPackageSpec"), code


def python_module(spec: JobSpec) -> str:
    """The module the job's code is: the user's, or the script launcher."""
    return SCRIPT_MODULE if spec.package.script else spec.package.module


def secrets_env(spec: JobSpec) -> dict[str, str]:
    """A job with ``secrets:`` runs ``python -m cloudtrain_secrets`` (packaged in its sdist), which reads
    the ``CLOUDTRAIN_SECRET_<NAME>`` references and then runs ``CLOUDTRAIN_RUN_MODULE``."""
    if not spec.secrets:
        return {}
    return {**secrets_job.reference_env(spec.secrets), secrets_job.RUN_MODULE_ENV: python_module(spec)}


def parent(project: str, region: str) -> str:
    return f"projects/{project}/locations/{region}"


def job_name(project: str, region: str, job_id: str) -> str:
    """Full resource name from a short id; a full name is returned as it is."""
    return job_id if _NAME.match(job_id) else f"{parent(project, region)}/customJobs/{job_id}"


def split_job_name(name: str) -> tuple[str, str, str] | None:
    """``projects/P/locations/R/customJobs/ID`` → (P, R, ID); None for a short id."""
    match = _NAME.match(name)
    return (match.group(1), match.group(2), match.group(3)) if match else None


def console_url(project: str, region: str, job_id: str) -> str:
    return f"https://console.cloud.google.com/vertex-ai/locations/{region}/training/{job_id}/cpu?project={project}"
