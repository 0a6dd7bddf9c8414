"""JobSpec → ``CreateTrainingJob`` parameters: one pure function, no I/O, no boto3.

``render`` (``--dry-run``) and ``submit`` both call :func:`create_training_job`, so the dry run is the request.
Hyperparameter values are JSON-encoded strings, as the SageMaker SDK writes and the TensorFlow container decodes
them. Besides the user's own, the request carries ``sagemaker_program`` / ``sagemaker_submit_directory`` (the
launcher in the source dir, :mod:`.sourcedir`), ``cloudtrain_module`` / ``cloudtrain_args`` (what the launcher runs,
as :meth:`JobSpec.module_args`); for a ``package.script`` job the script is the program and ``model_dir`` is added
as the estimator adds it unless ``model_dir: false``; with ``secrets:`` the references (never values) go in
``Environment`` and a script job's program is the launcher (script in ``sagemaker_cloudtrain_script``) so that the
secrets are read first. ``sagemaker_job_name`` is sent as the SDK sends it (the container exports it), and with
several instances ``sagemaker_multi_worker_mirrored_strategy_enabled`` makes the container write ``TF_CONFIG``
(``sagemaker_parameter_server_enabled`` for ``distribution.parameter_server``).

``sagemaker_cloudtrain_request`` is the sha256 of the whole rest of the request: ``DescribeTrainingJob`` returns
hyperparameters but not tags (moto not even the environment), so a retried create recognises its own job by the
same name and hash."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cloudtrain.backends.sagemaker.job_settings import sagemaker_settings
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.secrets.job import reference_env
from cloudtrain.spec import JobSpec

SOURCEDIR = "sourcedir.tar.gz"
LAUNCHER = "cloudtrain_launch.py"  # the sagemaker_program, at the top of the source dir
CONTAINER_LOG_LEVEL = 20  # logging.INFO, the SDK's default
#: Keys the launcher does not pass on as ``--key=value``: the container's, ours, SageMaker's own (``_tuning_…``).
RESERVED_PREFIXES = ("sagemaker_", "cloudtrain_", "_")
MAX_HYPERPARAMETERS = 100  # the service's limits (botocore's model; its validator checks neither)
MAX_HYPERPARAMETER_VALUE = 2500
REQUEST_HASH = "sagemaker_cloudtrain_request"  # sagemaker_: the container never passes it to a script
MWMS = "sagemaker_multi_worker_mirrored_strategy_enabled"
PARAMETER_SERVER = "sagemaker_parameter_server_enabled"  # the toolkit starts a server beside each host's worker
SCRIPT = "sagemaker_cloudtrain_script"  # a script job with secrets: the script the launcher runs


def sourcedir_uri(spec: JobSpec, package: BuiltPackage) -> str:
    """Where the source dir lives: keyed by the sdist's hash, so an unchanged package is uploaded once."""
    return f"{_staging(spec)}/{package.sha256}/{SOURCEDIR}"


def checkpoint_uri(spec: JobSpec) -> str:
    """Checkpoints (``/opt/ml/checkpoints``, synced to S3 during the job and back at its start), next to
    what SageMaker writes for this job (``OUTPUT/JOB/output/…``); ``--resume JOB``: that job's."""
    if spec.resume:
        return spec.resume.checkpoint_dir
    return f"{spec.output_dir}/{spec.job_name}/checkpoints"


TENSORBOARD_LOCAL_PATH = "/opt/ml/output/tensorboard"  # SageMaker's default; trainer/env.py writes there


def tensorboard_uri(spec: JobSpec) -> str:
    """Where SageMaker uploads the event files: the config's s3:// path, else beside the job's outputs
    (``OUTPUT/JOB/tensorboard``, inside what ``cloudtrain outputs`` lists)."""
    if isinstance(spec.tensorboard, str):
        return spec.tensorboard.rstrip("/")
    return f"{spec.output_dir}/{spec.job_name}/tensorboard"


def create_training_job(spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
    """The keyword arguments of ``sagemaker.create_training_job``, JSON-ready."""
    role_arn = sagemaker_settings(spec).role_arn
    if not role_arn:
        raise UsageError("SageMaker needs an execution role", hint="add role_arn: arn:aws:iam::123456789012:role/NAME")
    stopping: dict[str, int] = {"MaxRuntimeInSeconds": spec.max_runtime_seconds}
    params: dict[str, Any] = {
        "TrainingJobName": spec.job_name,
        "AlgorithmSpecification": algorithm(spec),
        "RoleArn": role_arn,
        # the launcher and the source dir; the user's own container gets its args as ContainerArguments
        **(
            {}
            if spec.container
            else {"HyperParameters": hyperparameters(spec, sourcedir_uri(spec, required(package, spec.job_name)))}
        ),
        "OutputDataConfig": {"S3OutputPath": spec.output_dir},
        "ResourceConfig": {
            "InstanceType": spec.machine.type,
            "InstanceCount": spec.replica_count,
            "VolumeSizeInGB": spec.machine.disk_gb,
        },
        "StoppingCondition": stopping,
    }
    if spec.channels:
        params["InputDataConfig"] = input_data_config(spec)
    if spec.spot:
        # SageMaker requires a max wait with spot; the shortest it accepts is the max runtime.
        stopping["MaxWaitTimeInSeconds"] = spec.max_wait_seconds or spec.max_runtime_seconds
        params["EnableManagedSpotTraining"] = True
    # Always: a job stopped for any reason (spot, a cancel, max_runtime) can be continued with --resume.
    params["CheckpointConfig"] = {"S3Uri": checkpoint_uri(spec)}
    environment = {**spec.env, **reference_env(spec.secrets)}
    if environment:
        params["Environment"] = environment
    if spec.labels:
        params["Tags"] = [{"Key": k, "Value": v} for k, v in spec.labels.items()]
    if spec.tensorboard:  # SageMaker uploads what the trainer writes to LocalPath (SM's default) while it runs
        params["TensorBoardOutputConfig"] = {
            "LocalPath": TENSORBOARD_LOCAL_PATH,
            "S3OutputPath": tensorboard_uri(spec),
        }
    if spec.experiment:
        params["ExperimentConfig"] = {"ExperimentName": spec.experiment, "RunName": spec.job_name}
    # a container job's HyperParameters hold only this (the image reads hyperparameters.json, if at all)
    params.setdefault("HyperParameters", {})[REQUEST_HASH] = json.dumps(request_hash(params))
    return params


def algorithm(spec: JobSpec) -> dict[str, Any]:
    """The training image; for a ``container:`` job also its entrypoint (``command``) and arguments."""
    out: dict[str, Any] = {"TrainingImage": spec.image_uri, "TrainingInputMode": "File"}
    if spec.container:
        if spec.container.command:
            out["ContainerEntrypoint"] = list(spec.container.command)
        if spec.module_args():
            out["ContainerArguments"] = list(spec.module_args())
    return out


def input_data_config(spec: JobSpec) -> list[dict[str, Any]]:
    """One ``S3Prefix`` channel per data channel: the container sees ``/opt/ml/input/data/<name>``
    and ``SM_CHANNEL_<NAME>``."""
    return [
        {
            "ChannelName": ch.name,
            "DataSource": {
                "S3DataSource": {
                    "S3DataType": "S3Prefix",
                    "S3Uri": ch.cloud_uri,
                    "S3DataDistributionType": ch.distribution,
                }
            },
            "InputMode": ch.input_mode,
        }
        for ch in spec.channels.values()
    ]


def request_hash(params: dict[str, Any]) -> str:
    """sha256 of the request in canonical JSON, less the hash's own hyperparameter."""
    hps = {k: v for k, v in params.get("HyperParameters", {}).items() if k != REQUEST_HASH}
    canonical = json.dumps({**params, "HyperParameters": hps}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def model_dir_uri(spec: JobSpec) -> str:
    """The ``model_dir`` the SageMaker TensorFlow estimator passes by default: ``OUTPUT/JOB/model``."""
    return f"{spec.output_dir}/{spec.job_name}/model"


def hyperparameters(spec: JobSpec, submit_directory: str, *, model_dir: str | None = None) -> dict[str, str]:
    """User hyperparameters first (config order), then the launcher's, then the container's: a script job is the
    ``sagemaker_program`` and gets ``model_dir`` unless ``model_dir: false``; a package job gets the launcher's
    ``cloudtrain_module`` / ``cloudtrain_args``."""
    hps: dict[str, str] = {}
    for key in spec.hyperparameters:
        if key.startswith(RESERVED_PREFIXES):
            raise UsageError(
                f"hyperparameters: {key!r} starts with a prefix SageMaker or cloudtrain reserve "
                f"({', '.join(RESERVED_PREFIXES)})",
                hint="rename it",
            )
    if spec.package.script:
        user = spec.script_hyperparameters(model_dir or model_dir_uri(spec))
        hps.update((key, json.dumps(value)) for key, value in user.items())
        hps["sagemaker_program"] = json.dumps(LAUNCHER if spec.secrets else spec.package.script)
        if spec.secrets:
            hps[SCRIPT] = json.dumps(spec.package.script)
    else:
        hps.update((key, json.dumps(value)) for key, value in spec.hyperparameters.items())
        hps["cloudtrain_module"] = json.dumps(spec.package.module)
        hps["cloudtrain_args"] = json.dumps(list(spec.args))
        hps["sagemaker_program"] = json.dumps(LAUNCHER)
    hps["sagemaker_submit_directory"] = json.dumps(submit_directory)
    hps["sagemaker_region"] = json.dumps(spec.region)
    hps["sagemaker_container_log_level"] = json.dumps(CONTAINER_LOG_LEVEL)
    hps["sagemaker_job_name"] = json.dumps(spec.job_name)
    if spec.parameter_server:  # as the estimator's distribution={"parameter_server": ...} sends it, instead of MWMS
        hps[PARAMETER_SERVER] = json.dumps(True)
    elif spec.replica_count > 1:
        hps[MWMS] = json.dumps(True)
    if len(hps) + 1 > MAX_HYPERPARAMETERS:  # + the request hash
        raise UsageError(
            f"hyperparameters: {len(spec.hyperparameters)} given; SageMaker allows {MAX_HYPERPARAMETERS} "
            f"including the {len(hps) + 1 - len(spec.hyperparameters)} cloudtrain adds",
            hint="pass the rest in args or a config file inside the package",
        )
    for key, value in hps.items():
        if len(value) > MAX_HYPERPARAMETER_VALUE:
            field = "args" if key == "cloudtrain_args" else f"hyperparameters: {key}"
            raise UsageError(
                f"{field}: {len(value)} characters once JSON-encoded; SageMaker allows {MAX_HYPERPARAMETER_VALUE}",
                hint="move long values into a file inside the package",
            )
    return hps


def _staging(spec: JobSpec) -> str:
    """``<staging>/cloudtrain/packages`` or ``<job_dir>/packages``."""
    prefix = spec.package_prefix or ""
    if not prefix.startswith("s3://") or len(prefix.split("/")[2]) == 0:
        raise UsageError(
            f"staging_bucket must be an s3:// URI for SageMaker, got {spec.staging_bucket or spec.job_dir!r}",
            hint="set staging_bucket: s3://YOUR-BUCKET in the config",
        )
    return prefix
