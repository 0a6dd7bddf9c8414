"""The cloud's environment contract for replica *i* of *n*, as pure functions.

Nothing here touches the disk or the network: a :class:`ReplicaPlan` lists the variables,
folders and files that :mod:`.processes` then creates. The shapes follow each cloud's
documentation and its own code:

- **Vertex AI** (``CustomJobSpec.baseOutputDirectory``): ``AIP_MODEL_DIR`` =
  ``<base>/model/``, ``AIP_CHECKPOINT_DIR`` = ``<base>/checkpoints/``,
  ``AIP_TENSORBOARD_LOG_DIR`` = ``<base>/logs/``, the same on every replica;
  ``CLOUD_ML_JOB_ID``; with several replicas ``CLUSTER_SPEC`` (``workerpool0`` = the
  chief, ``workerpool1`` = the workers) and ``TF_CONFIG`` (``chief`` / ``worker``), both
  with ``"environment": "cloud"`` and the job spec under ``"job"``.
- **SageMaker** (what the platform mounts at ``/opt/ml`` and what
  ``sagemaker_training.environment.Environment.to_env_vars`` exports): one ``/opt/ml``
  tree per host ``algo-1`` … ``algo-n`` with ``input/config/{hyperparameters,
  resourceconfig,inputdataconfig}.json`` (every hyperparameter a JSON-encoded string, as
  the SageMaker Python SDK writes them), ``input/data/<channel>/``, ``model/``,
  ``output/data/``, ``checkpoints/``; the ``SM_*`` variables; and with several hosts the
  ``TF_CONFIG`` the SageMaker TensorFlow container writes for multi-worker mirrored
  training (``worker`` tasks only, host 0 first). ``SAGEMAKER_BASE_DIR`` points at the
  tree: it is sagemaker-training's own override of ``/opt/ml``. Also what the entry the TF
  training images run sets before it starts the script (see :func:`sagemaker_entry_env`), and
  not what its shell drops (:mod:`cloudtrain.backends.sagemaker.entry_shell`).

Hosts are ``127.0.0.1:<port>`` instead of the cloud's host names, since every replica
runs on this machine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cloudtrain.backends.sagemaker.entry_shell import shell_drops
from cloudtrain.data import schemes
from cloudtrain.spec import JobSpec, sagemaker_cmd_args

SM_GROUP = "homogeneousCluster"  # SageMaker's instance group name for a plain job
SM_TF_TRAINING_MODULE = "sagemaker_tensorflow_container.training:main"
SM_LOG_LEVEL = 20  # logging.INFO, the container's default
# sagemaker_* hyperparameters the toolkit keeps for itself (sagemaker_training.params).
_SM_RESERVED = (
    "sagemaker_program",
    "sagemaker_submit_directory",
    "sagemaker_enable_cloudwatch_metrics",
    "sagemaker_region",
    "sagemaker_container_log_level",
    "sagemaker_job_name",
    "default_user_module_name",
    "_tuning_objective_metric",
    "sagemaker_s3_output",
)
_MWMS = "sagemaker_multi_worker_mirrored_strategy_enabled"


@dataclass(frozen=True)
class ReplicaPlan:
    name: str  # the log prefix: "chief", "worker-0" (Vertex); "algo-1" (SageMaker)
    index: int  # 0 … n-1; 0 is the chief
    env: Mapping[str, str]  # the contract's variables only
    cwd: str
    model_dir: str
    checkpoint_dir: str
    tensorboard_dir: str
    dirs: tuple[str, ...] = ()  # folders to create before start
    files: Mapping[str, str] = field(default_factory=dict)  # path → text to write before start
    links: Mapping[str, str] = field(default_factory=dict)  # path → folder it links to (data channels)
    unpack: Mapping[str, str] = field(default_factory=dict)  # folder → script sdist whose source goes there


def replica_names(cloud: str, n: int) -> list[str]:
    if cloud == "sagemaker":
        return [f"algo-{i + 1}" for i in range(n)]
    return ["chief", *(f"worker-{i}" for i in range(n - 1))]


def plan(
    spec: JobSpec,
    *,
    output_dir: str,
    ports: Sequence[int],
    package,
    channels: Mapping[str, str] | None = None,
    num_gpus: Sequence[int] | int = 0,
    num_cpus: int = 1,
) -> list[ReplicaPlan]:
    """Every replica's plan for ``spec.cloud``; ``output_dir`` is absolute and local; ``package``
    is the :class:`~cloudtrain.packaging.BuiltPackage` (its local path stands in for the upload);
    ``channels``: name → local folder holding that channel's data (linked into the run)."""
    if len(ports) != spec.replica_count:
        raise ValueError(f"need {spec.replica_count} ports, got {len(ports)}")
    if spec.cloud == "sagemaker":
        return sagemaker_plan(
            spec,
            output_dir=output_dir,
            ports=ports,
            package=package,
            channels=channels,
            num_gpus=num_gpus,
            num_cpus=num_cpus,
        )
    return vertex_plan(spec, output_dir=output_dir, ports=ports, package=package, channels=channels, num_gpus=num_gpus)


def argv(spec: JobSpec, plan: ReplicaPlan, python: str, package) -> list[str]:
    """What replica ``plan`` runs: the cloud's command, with this run's paths.

    A package runs as ``python -m MODULE ARGS``. A script (``package.script``) gets the
    hyperparameters as the SageMaker toolkit passes them, with ``--model_dir`` this run's model
    folder (see :meth:`JobSpec.script_args`): under SageMaker's contract the script itself runs
    from ``<host>/code`` as the toolkit runs it; under Vertex's the launcher Vertex runs
    (``python -m cloudtrain_script``) copies the folder and runs it."""
    from cloudtrain.packaging import script, script_main

    if not spec.package.script:
        return [python, "-m", spec.package.module, *spec.module_args()]
    args = spec.script_args(plan.model_dir)
    if spec.cloud == "sagemaker":
        return script_main.script_command(spec.package.script, script.has_setup_py(package), args, python)
    return [python, "-m", script.PACKAGE, *args]


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *parts])


# --- Vertex AI ---------------------------------------------------------------------------


def vertex_job_spec(spec: JobSpec, *, output_dir: str, package, channel_env: Mapping[str, str] = {}) -> dict[str, Any]:
    """The ``CustomJobSpec`` that CLUSTER_SPEC and TF_CONFIG carry as ``job``: the Vertex backend's
    own request (REST JSON), with the local output dir, the local sdist and the local channel
    folders in place of Cloud Storage."""
    from cloudtrain.backends.vertex.request import render_custom_job

    bucket = spec.staging_bucket if (spec.staging_bucket or "").startswith("gs://") else "gs://local"
    local = replace(
        spec, output_dir=output_dir, staging_bucket=bucket, env={**spec.env, **channel_env}, channels={}, resume=None
    )  # a local resume copies the checkpoints instead
    job = render_custom_job(local, package)["jobSpec"]
    for pool in job["workerPoolSpecs"]:
        pool["pythonPackageSpec"]["packageUris"] = [str(package.path)]
    return job


def vertex_plan(
    spec: JobSpec,
    *,
    output_dir: str,
    ports: Sequence[int],
    package,
    channels: Mapping[str, str] | None = None,
    num_gpus: Sequence[int] | int = 0,
) -> list[ReplicaPlan]:
    """``channels``: name → local folder, linked at ``<output_dir>/local-run/data/<name>`` (where the
    cloud has ``/gcs/bucket/path``) and passed as ``SM_CHANNEL_<NAME>``, as the Vertex backend does."""
    n = spec.replica_count
    addresses = [f"127.0.0.1:{p}" for p in ports]
    gpus = [num_gpus] * n if isinstance(num_gpus, int) else list(num_gpus)
    model, checkpoints, logs = (_join(output_dir, d) + "/" for d in ("model", "checkpoints", "logs"))
    links = {_join(output_dir, "local-run", "data", ch): src for ch, src in sorted((channels or {}).items())}
    channel_env = {schemes.channel_env(ch): _join(output_dir, "local-run", "data", ch) for ch in sorted(channels or {})}
    job = vertex_job_spec(spec, output_dir=output_dir, package=package, channel_env=channel_env)
    plans = []
    for i, name in enumerate(replica_names("vertex", n)):
        env = {
            "AIP_MODEL_DIR": model,
            "AIP_CHECKPOINT_DIR": checkpoints,
            "AIP_TENSORBOARD_LOG_DIR": logs,
            "CLOUD_ML_JOB_ID": spec.job_name,
            **channel_env,
        }
        if spec.package.script:  # as the request's script_env; the launcher derives the other SM_* variables
            env["SM_NUM_GPUS"] = str(gpus[i])
        if n > 1:
            pool, tf_type, index = ("workerpool0", "chief", 0) if i == 0 else ("workerpool1", "worker", i - 1)
            env["CLUSTER_SPEC"] = json.dumps(
                {
                    "cluster": {"workerpool0": addresses[:1], "workerpool1": addresses[1:]},
                    "environment": "cloud",
                    "task": {"type": pool, "index": index},
                    "job": job,
                }
            )
            env["TF_CONFIG"] = json.dumps(
                {
                    "cluster": {"chief": addresses[:1], "worker": addresses[1:]},
                    "environment": "cloud",
                    "task": {"type": tf_type, "index": index},
                    "job": job,
                }
            )
        plans.append(
            ReplicaPlan(
                name=name,
                index=i,
                env=env,
                cwd=_join(output_dir, "local-run", name),
                model_dir=model,
                checkpoint_dir=checkpoints,
                tensorboard_dir=logs,
                dirs=(_join(output_dir, "local-run", name),),
                links=links if i == 0 else {},
            )
        )
    return plans


# --- SageMaker ---------------------------------------------------------------------------


def sagemaker_hyperparameters(spec: JobSpec, *, package_uri: str, model_dir: str | None = None) -> dict[str, str]:
    """hyperparameters.json: exactly the ``HyperParameters`` the SageMaker backend sends (every
    value JSON-encoded; the launcher's ``cloudtrain_module`` / ``cloudtrain_args``, the
    container's ``sagemaker_*``), with the local sdist as the submit directory and, for a
    script, ``model_dir`` as the local model folder."""
    from cloudtrain.backends.sagemaker.request import hyperparameters

    return hyperparameters(spec, package_uri, model_dir=model_dir)


def sagemaker_resource_config(hosts: Sequence[str], current: str, instance_type: str) -> dict[str, Any]:
    return {
        "current_host": current,
        "current_instance_type": instance_type,
        "current_group_name": SM_GROUP,
        "hosts": list(hosts),
        "instance_groups": [{"instance_group_name": SM_GROUP, "instance_type": instance_type, "hosts": list(hosts)}],
        "network_interface_name": "eth0",
    }


def sagemaker_input_data_config(channels: Sequence[str], settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """inputdataconfig.json; ``settings``: name → :class:`~cloudtrain.spec.DataChannel` (mode, distribution)."""
    settings = settings or {}
    return {
        ch: {
            "TrainingInputMode": getattr(settings.get(ch), "input_mode", "File"),
            "S3DistributionType": getattr(settings.get(ch), "distribution", "FullyReplicated"),
            "RecordWrapperType": "None",
        }
        for ch in channels
    }


def sagemaker_tf_config(addresses: Sequence[str], index: int) -> dict[str, Any]:
    """As the SageMaker TF container builds it for multi-worker mirrored: workers only."""
    return {"cluster": {"worker": list(addresses)}, "environment": "cloud", "task": {"index": index, "type": "worker"}}


def sagemaker_plan(
    spec: JobSpec,
    *,
    output_dir: str,
    ports: Sequence[int],
    package,
    channels: Mapping[str, str | Sequence[str]] | None = None,
    num_gpus: Sequence[int] | int = 0,
    num_cpus: int = 1,
) -> list[ReplicaPlan]:
    """``channels``: name → local folder with that channel's data (linked into input/data/<name>),
    or one folder per host (a ``ShardedByS3Key`` channel: each host its share of the objects)."""
    n = spec.replica_count
    hosts = replica_names("sagemaker", n)
    addresses = [f"127.0.0.1:{p}" for p in ports]
    gpus = [num_gpus] * n if isinstance(num_gpus, int) else list(num_gpus)
    channels = dict(channels or {})
    package_uri = str(package.path)
    idc = sagemaker_input_data_config(sorted(channels), spec.channels)
    plans = []
    for i, host in enumerate(hosts):
        base = _join(output_dir, host)
        # A script's model_dir is this host's model folder (the cloud's is an S3 path it cannot write here).
        hps_json = sagemaker_hyperparameters(spec, package_uri=package_uri, model_dir=_join(base, "model"))
        decoded = {k: json.loads(v) for k, v in hps_json.items()}
        user_hps = {k: v for k, v in decoded.items() if not k.startswith("sagemaker_") and k not in _SM_RESERVED}
        framework = {k: v for k, v in decoded.items() if k.startswith("sagemaker_") and k not in _SM_RESERVED}
        rc = sagemaker_resource_config(hosts, host, spec.machine.type)
        sm = sagemaker_env_vars(
            base=base,
            resource_config=rc,
            input_data_config=idc,
            hyperparameters=user_hps,
            framework_params=framework,
            entry_point=decoded["sagemaker_program"],
            module_dir=package_uri,
            job_name=spec.job_name,
            num_gpus=gpus[i],
            num_cpus=num_cpus,
            log_level=decoded.get("sagemaker_container_log_level", SM_LOG_LEVEL),
        )
        env = {
            **{k: v for k, v in sm.items() if not shell_drops(k)},
            **sagemaker_entry_env(spec, decoded, code_dir=_join(base, "code")),
            "SAGEMAKER_BASE_DIR": base,
            "SAGEMAKER_TRAINING_MODULE": SM_TF_TRAINING_MODULE,
            "SAGEMAKER_REGION": spec.region,
            "TRAINING_JOB_NAME": spec.job_name,
            "CURRENT_HOST": host,
        }
        if n > 1:
            env["TF_CONFIG"] = json.dumps(sagemaker_tf_config(addresses, i))
        config = _join(base, "input", "config")
        files = {
            _join(config, "hyperparameters.json"): json.dumps(hps_json, indent=2),
            _join(config, "resourceconfig.json"): json.dumps(rc, indent=2),
            _join(config, "inputdataconfig.json"): json.dumps(idc, indent=2),
        }
        dirs = [config, _join(base, "input", "data")]
        layout = (("model",), ("output", "data"), ("output", "intermediate"), ("checkpoints",), ("code",))
        dirs += [_join(base, *d) for d in layout]
        plans.append(
            ReplicaPlan(
                name=host,
                index=i,
                env=env,
                cwd=_join(base, "code"),
                model_dir=_join(base, "model"),
                checkpoint_dir=_join(base, "checkpoints"),
                tensorboard_dir=_join(base, "output", "tensorboard"),
                dirs=tuple(dirs),
                files=files,
                links={
                    _join(base, "input", "data", ch): src if isinstance(src, str) else src[i]
                    for ch, src in sorted(channels.items())
                },
                # The toolkit unpacks sagemaker_submit_directory into /opt/ml/code; for a script that is its folder.
                unpack={_join(base, "code"): str(package.path)} if spec.package.script else {},
            )
        )
    return plans


def sagemaker_entry_env(spec: JobSpec, hyperparameters: Mapping[str, Any], *, code_dir: str) -> dict[str, str]:
    """What the SageMaker platform and the TF container's entry set besides ``SM_*``:

    - ``AWS_REGION``: the platform's;
    - ``SAGEMAKER_JOB_NAME``: ``sagemaker_training.environment``, from the ``sagemaker_job_name``
      hyperparameter;
    - ``S3_REGION`` (the region of ``model_dir``'s bucket, else the job's: here the job's),
      ``S3_USE_HTTPS``, ``TF_CPP_MIN_LOG_LEVEL``: ``sagemaker_tensorflow_container.s3_utils.configure``;
    - ``PYTHONPATH``: the code directory, then the launcher's own ``sys.path``
      (``environment.write_env_vars``); here the code directory alone;
    - ``PWD``: the code directory, where ``/bin/sh`` starts the script (the shell exports it)."""
    return {
        "AWS_REGION": spec.region,
        "SAGEMAKER_JOB_NAME": str(hyperparameters.get("sagemaker_job_name", "")),
        "S3_REGION": spec.region,
        "S3_USE_HTTPS": "1",
        "TF_CPP_MIN_LOG_LEVEL": "1",
        "PYTHONPATH": code_dir,
        "PWD": code_dir,
    }


def _sm_value(value: Any) -> str:
    """sagemaker_training.mapping.to_env_vars' value format."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sagemaker_env_vars(
    *,
    base: str,
    resource_config: Mapping[str, Any],
    input_data_config: Mapping[str, Any],
    hyperparameters: Mapping[str, Any],
    framework_params: Mapping[str, Any],
    entry_point: str,
    module_dir: str,
    job_name: str,
    num_gpus: int,
    num_cpus: int,
    log_level: int = SM_LOG_LEVEL,
) -> dict[str, str]:
    """The ``SM_*`` variables, key for key as ``Environment.to_env_vars()`` exports them."""
    hosts = list(resource_config["hosts"])
    current = resource_config["current_host"]
    group = {g["instance_group_name"]: g for g in resource_config["instance_groups"]}
    distributed = [SM_GROUP] if framework_params.get(_MWMS) else []
    channels = {ch: _join(base, "input", "data", ch) for ch in input_data_config}
    values: dict[str, Any] = {
        "hosts": hosts,
        "network_interface_name": resource_config.get("network_interface_name", "eth0"),
        "hps": dict(hyperparameters),
        "user_entry_point": entry_point,
        "framework_params": dict(framework_params),
        "resource_config": dict(resource_config),
        "input_data_config": dict(input_data_config),
        "output_data_dir": _join(base, "output", "data"),
        "channels": sorted(channels),
        "current_host": current,
        "current_instance_type": resource_config["current_instance_type"],
        "current_instance_group": resource_config["current_group_name"],
        "current_instance_group_hosts": group[resource_config["current_group_name"]]["hosts"],
        "instance_groups": list(group),
        "instance_groups_dict": group,
        "distribution_instance_groups": distributed,
        "is_hetero": len(group) > 1,
        "module_name": entry_point[:-3] if entry_point.endswith(".py") else entry_point,
        "log_level": log_level,
        "framework_module": SM_TF_TRAINING_MODULE,
        "input_dir": _join(base, "input"),
        "input_config_dir": _join(base, "input", "config"),
        "output_dir": _join(base, "output"),
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
        "num_neurons": 0,
        "model_dir": _join(base, "model"),
        "module_dir": module_dir,
        "user_args": sagemaker_cmd_args(hyperparameters),
        "output_intermediate_dir": _join(base, "output", "intermediate"),
    }
    master = (hosts if not distributed else group[SM_GROUP]["hosts"])[0]
    training_env = {k: v for k, v in values.items() if k not in ("hps", "framework_params", "channels", "user_args")}
    training_env.update(
        additional_framework_parameters=dict(framework_params),
        channel_input_dirs=channels,
        distribution_hosts=list(hosts) if distributed else [],
        hyperparameters=dict(hyperparameters),
        is_master=current == master,
        is_modelparallel_enabled=None,
        is_smddpmprun_installed=False,
        is_smddprun_installed=False,
        job_name=job_name,
        master_hostname=master,
    )
    values["training_env"] = training_env
    for name, path in channels.items():
        values[f"channel_{name}"] = path
    for key, value in hyperparameters.items():
        values[f"hp_{key}"] = value
    return {f"SM_{k.upper()}": _sm_value(v) for k, v in values.items()}


def gpu_assignment(num_gpus: int, n: int) -> list[str | None]:
    """``CUDA_VISIBLE_DEVICES`` per replica: an even split when there are enough GPUs,
    else ``None`` (all replicas see all GPUs and share them)."""
    if num_gpus == 0 or n == 1 or num_gpus < n:
        return [None] * n
    per = num_gpus // n
    return [",".join(str(g) for g in range(i * per, (i + 1) * per)) for i in range(n)]
