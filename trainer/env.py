"""The platform contract: where a run reads its data and writes its outputs.

Each directory is resolved in one order, first hit wins:

1. its own flag (``--model-dir``, ``--checkpoint-dir``, ``--tensorboard-dir``,
   ``--output-dir``);
2. ``--job-dir`` as on Cloud ML Engine, laid out like Vertex's base output
   directory: ``<job-dir>/model``, ``<job-dir>/checkpoints``, ``<job-dir>/logs``;
3. the platform's variables:

   - Vertex AI: ``AIP_MODEL_DIR``, ``AIP_CHECKPOINT_DIR``,
     ``AIP_TENSORBOARD_LOG_DIR`` (siblings of ``AIP_MODEL_DIR`` when one is
     missing), ``AIP_TRAINING_DATA_URI`` / ``AIP_VALIDATION_DATA_URI``, and the
     channels cloudtrain passes as ``SM_CHANNEL_<NAME>`` (``/gcs/bucket/path``);
   - SageMaker: ``SM_MODEL_DIR``, ``SM_OUTPUT_DATA_DIR``, ``/opt/ml/checkpoints``
     (synced to S3 when the job has a checkpoint config), TensorBoard under
     ``/opt/ml/output/tensorboard`` (SageMaker's default local path; both under
     ``SAGEMAKER_BASE_DIR`` instead of ``/opt/ml`` when that is set), data from
     ``SM_CHANNEL_TRAIN``/``TRAINING`` and ``SM_CHANNEL_VALIDATION``/``EVAL``/
     ``TEST``, hyperparameters from ``SM_HPS``;

4. locally: ``./trainer_output/{model,checkpoints,logs}``.

Paths may be local, ``gs://`` or ``s3://``; they are only strings here and are
opened with ``tf.io.gfile`` later. This module never imports TensorFlow.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from trainer.errors import TrainerError

LOCAL_BASE = "trainer_output"
#: SageMaker's fixed paths, under /opt/ml or SAGEMAKER_BASE_DIR (sagemaker-training's own
#: override of /opt/ml, which `cloudtrain submit --local` sets per host).
SAGEMAKER_BASE_DIR = "/opt/ml"
SAGEMAKER_CHECKPOINT_DIR = "checkpoints"
SAGEMAKER_TENSORBOARD_DIR = "output/tensorboard"
CHANNEL_PREFIX = "SM_CHANNEL_"
_SM_TRAIN_CHANNELS = ("SM_CHANNEL_TRAIN", "SM_CHANNEL_TRAINING")
_SM_VAL_CHANNELS = ("SM_CHANNEL_VALIDATION", "SM_CHANNEL_VAL", "SM_CHANNEL_EVAL", "SM_CHANNEL_TEST")


@dataclass(frozen=True)
class Dirs:
    model_dir: str
    checkpoint_dir: str
    tensorboard_dir: str
    output_dir: str | None
    # For the plan: where each directory came from ("--job-dir", "AIP_MODEL_DIR", ...).
    origin: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Contract:
    platform: str  # "vertex", "sagemaker" or "local"
    job_id: str | None
    dirs: Dirs
    train_data: str | None  # data location the platform hands us, if any
    train_data_var: str | None  # the variable it came from
    val_data: str | None
    channels: Mapping[str, str]  # every SM_CHANNEL_<NAME>: NAME (upper case) → folder
    presharded: frozenset[str]  # folders of ShardedByS3Key channels: each host already has only its share
    hyperparameters: Mapping[str, object]  # SM_HPS
    num_gpus: int | None  # SM_NUM_GPUS: what SageMaker believes the host has
    hosts: tuple[str, ...]
    current_host: str | None
    export_layout: str  # "root": SavedModel at model_dir; "versioned": model_dir/1/


def join(base: str, *parts: str) -> str:
    """Join path parts with "/" for URLs and local POSIX paths alike."""
    return posixpath.join(base.rstrip("/") or "/", *parts) if base else posixpath.join(*parts)


def detect_platform(environ: Mapping[str, str]) -> str:
    if any(k.startswith("AIP_") for k in environ) or "CLOUD_ML_JOB_ID" in environ:
        return "vertex"
    if "SM_MODEL_DIR" in environ or "SM_CURRENT_HOST" in environ or "TRAINING_JOB_NAME" in environ:
        return "sagemaker"
    return "local"


def _platform_dirs(platform: str, environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Directory -> (path, origin) as the platform's variables define them."""
    found: dict[str, tuple[str, str]] = {}
    if platform == "vertex":
        model = environ.get("AIP_MODEL_DIR")
        base = posixpath.dirname(model.rstrip("/")) if model else None
        for key, var, sibling in (
            ("model_dir", "AIP_MODEL_DIR", None),
            ("checkpoint_dir", "AIP_CHECKPOINT_DIR", "checkpoints"),
            ("tensorboard_dir", "AIP_TENSORBOARD_LOG_DIR", "logs"),
        ):
            if environ.get(var):
                found[key] = (environ[var], var)
            elif base and sibling:
                found[key] = (join(base, sibling), f"beside AIP_MODEL_DIR ({var} unset)")
    elif platform == "sagemaker":
        if environ.get("SM_MODEL_DIR"):
            found["model_dir"] = (environ["SM_MODEL_DIR"], "SM_MODEL_DIR")
        base = environ.get("SAGEMAKER_BASE_DIR") or SAGEMAKER_BASE_DIR
        found["checkpoint_dir"] = (join(base, SAGEMAKER_CHECKPOINT_DIR), "SageMaker checkpoint path")
        found["tensorboard_dir"] = (join(base, SAGEMAKER_TENSORBOARD_DIR), "SageMaker TensorBoard path")
        if environ.get("SM_OUTPUT_DATA_DIR"):
            found["output_dir"] = (environ["SM_OUTPUT_DATA_DIR"], "SM_OUTPUT_DATA_DIR")
    return found


def resolve_dirs(
    environ: Mapping[str, str],
    *,
    job_dir: str | None = None,
    model_dir: str | None = None,
    checkpoint_dir: str | None = None,
    tensorboard_dir: str | None = None,
    output_dir: str | None = None,
) -> Dirs:
    platform = detect_platform(environ)
    flags = {
        "model_dir": model_dir,
        "checkpoint_dir": checkpoint_dir,
        "tensorboard_dir": tensorboard_dir,
        "output_dir": output_dir,
    }
    from_job_dir = {"model_dir": "model", "checkpoint_dir": "checkpoints", "tensorboard_dir": "logs"}
    from_platform = _platform_dirs(platform, environ)
    chosen: dict[str, str] = {}
    origin: dict[str, str] = {}
    for key, flag_value in flags.items():
        flag = "--" + key.replace("_", "-")
        if flag_value:
            chosen[key], origin[key] = flag_value, flag
        elif job_dir and key in from_job_dir:
            chosen[key], origin[key] = join(job_dir, from_job_dir[key]), "--job-dir"
        elif key in from_platform:
            chosen[key], origin[key] = from_platform[key]
        elif key in from_job_dir:
            chosen[key], origin[key] = join(LOCAL_BASE, from_job_dir[key]), "local default"
    return Dirs(
        model_dir=chosen["model_dir"],
        checkpoint_dir=chosen["checkpoint_dir"],
        tensorboard_dir=chosen["tensorboard_dir"],
        output_dir=chosen.get("output_dir"),  # the one directory with no default
        origin=origin,
    )


def parse_json_env(environ: Mapping[str, str], name: str, default: object) -> object:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TrainerError(f"{name} is not valid JSON ({exc.msg} at position {exc.pos}): {raw[:200]!r}") from None


def channels(environ: Mapping[str, str]) -> dict[str, str]:
    """``SM_CHANNEL_TRAIN=/opt/ml/input/data/train`` → ``{"TRAIN": "/opt/ml/input/data/train"}``."""
    return {k[len(CHANNEL_PREFIX) :]: v for k, v in sorted(environ.items()) if k.startswith(CHANNEL_PREFIX) and v}


def presharded(environ: Mapping[str, str]) -> frozenset[str]:
    """Folders of channels SageMaker shards by key (``SM_INPUT_DATA_CONFIG``): not to be sharded again."""
    config = parse_json_env(environ, "SM_INPUT_DATA_CONFIG", {})
    if not isinstance(config, dict):
        return frozenset()
    return frozenset(
        environ[f"{CHANNEL_PREFIX}{name.upper()}"]
        for name, settings in config.items()
        if isinstance(settings, dict)
        and settings.get("S3DistributionType") == "ShardedByS3Key"
        and environ.get(f"{CHANNEL_PREFIX}{name.upper()}")
    )


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> tuple[str | None, str | None]:
    for name in names:
        if environ.get(name):
            return environ[name], name
    return None, None


def resolve(environ: Mapping[str, str], **dir_flags: str | None) -> Contract:
    """The whole contract from ``environ`` plus the directory flags of ``resolve_dirs``."""
    platform = detect_platform(environ)
    dirs = resolve_dirs(environ, **dir_flags)
    hps = parse_json_env(environ, "SM_HPS", {})
    if not isinstance(hps, dict):
        raise TrainerError(f"SM_HPS must be a JSON object of hyperparameters, got {type(hps).__name__}")
    hosts = parse_json_env(environ, "SM_HOSTS", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise TrainerError(f"SM_HOSTS must be a JSON list of host names, got {environ.get('SM_HOSTS')!r}")
    num_gpus = environ.get("SM_NUM_GPUS")
    try:
        num_gpus_value = int(num_gpus) if num_gpus not in (None, "") else None
    except ValueError:
        raise TrainerError(f"SM_NUM_GPUS must be an integer, got {num_gpus!r}") from None
    if platform == "vertex":
        train_data, train_var = _first(environ, ("AIP_TRAINING_DATA_URI", *_SM_TRAIN_CHANNELS))
        val_data, _ = _first(environ, ("AIP_VALIDATION_DATA_URI", *_SM_VAL_CHANNELS))
        job_id = environ.get("CLOUD_ML_JOB_ID")
    else:
        train_data, train_var = _first(environ, _SM_TRAIN_CHANNELS)
        val_data, _ = _first(environ, _SM_VAL_CHANNELS)
        job_id = environ.get("TRAINING_JOB_NAME")
    return Contract(
        platform=platform,
        job_id=job_id,
        dirs=dirs,
        train_data=train_data,
        train_data_var=train_var,
        val_data=val_data,
        channels=channels(environ),
        presharded=presharded(environ),
        hyperparameters=hps,
        num_gpus=num_gpus_value,
        hosts=tuple(hosts),
        current_host=environ.get("SM_CURRENT_HOST"),
        # SageMaker's TF Serving container loads model/<version>/; Vertex's
        # prebuilt TF containers want saved_model.pb directly in AIP_MODEL_DIR.
        export_layout="versioned" if platform == "sagemaker" else "root",
    )
