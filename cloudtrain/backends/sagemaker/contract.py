"""SageMaker's environment contract for replica *i* of *n*, for ``--local``.

What the platform mounts at ``/opt/ml`` and what ``sagemaker_training``'s ``Environment.to_env_vars`` exports: one
tree per host ``algo-1`` … ``algo-n`` (``input/config/*.json`` with every hyperparameter a JSON-encoded string,
``input/data/<channel>/``, ``model/``, ``output/data/``, ``checkpoints/``), the ``SM_*`` variables, and with several
hosts the container's ``TF_CONFIG`` (``worker`` tasks only, host 0 first). ``SAGEMAKER_BASE_DIR`` points at the tree
(sagemaker-training's own override of ``/opt/ml``). Also what the TF images' entry sets before the script
(:func:`sagemaker_entry_env`), and not what its shell drops (:mod:`.entry_shell`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from cloudtrain.backends.environment import MachineRoot, ReplicaLayout, ReplicaPlan, join
from cloudtrain.backends.sagemaker import request
from cloudtrain.backends.sagemaker.entry_shell import shell_drops
from cloudtrain.config.script_mode import script_cmd_args
from cloudtrain.packaging import BuiltPackage, script, script_main
from cloudtrain.spec import JobSpec

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


def host_names(n: int) -> list[str]:
    return [f"algo-{i + 1}" for i in range(n)]


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


def sagemaker_tf_config(addresses: Sequence[str], index: int, *, ps: bool = False) -> dict[str, Any]:
    """As the SageMaker TF container builds it for multi-worker mirrored: workers only; with parameter servers
    (``training._build_tf_config``) host 0 the master, the others workers, a ps on every host at the next port."""
    cluster: dict[str, list[str]] = {"worker": list(addresses)}
    task = {"index": index, "type": "worker"}
    if ps:  # several hosts only
        servers = [f"{host}:{int(port) + 1}" for host, port in (a.rsplit(":", 1) for a in addresses)]
        cluster = {"master": list(addresses[:1]), "ps": servers, "worker": list(addresses[1:])}
        task = {"index": 0, "type": "master"} if index == 0 else {"index": index - 1, "type": "worker"}
    return {"cluster": cluster, "environment": "cloud", "task": task}


def sagemaker_plan(spec: JobSpec, layout: ReplicaLayout) -> list[ReplicaPlan]:
    """``layout.channels``: name → local folder with that channel's data (linked into input/data/<name>),
    or one folder per host (a ``ShardedByS3Key`` channel: each host its share of the objects)."""
    n, output_dir, package, num_cpus = spec.replica_count, layout.output_dir, layout.package, layout.num_cpus
    hosts = host_names(n)
    addresses = [f"127.0.0.1:{p}" for p in layout.ports]
    gpus = layout.gpus(n)
    channels = dict(layout.channels)
    package_uri = str(package.path)
    idc = sagemaker_input_data_config(sorted(channels), spec.channels)
    plans = []
    for i, host in enumerate(hosts):
        base = join(output_dir, host)
        # hyperparameters.json: exactly the HyperParameters the backend sends, the local sdist as the submit
        # directory; a script's model_dir is this host's model folder (the cloud's is an S3 path it cannot write here)
        hps_json = request.hyperparameters(spec, package_uri, model_dir=join(base, "model"))
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
            **sagemaker_entry_env(spec, decoded, code_dir=join(base, "code")),
            "SAGEMAKER_BASE_DIR": base,
            "SAGEMAKER_TRAINING_MODULE": SM_TF_TRAINING_MODULE,
            "SAGEMAKER_REGION": spec.region,
            "TRAINING_JOB_NAME": spec.job_name,
            "CURRENT_HOST": host,
        }
        if n > 1:
            env["TF_CONFIG"] = json.dumps(sagemaker_tf_config(addresses, i, ps=spec.parameter_server))
        config = join(base, "input", "config")
        files = {
            join(config, "hyperparameters.json"): json.dumps(hps_json, indent=2),
            join(config, "resourceconfig.json"): json.dumps(rc, indent=2),
            join(config, "inputdataconfig.json"): json.dumps(idc, indent=2),
        }
        dirs = [config, join(base, "input", "data")]
        folders = (("model",), ("output", "data"), ("output", "intermediate"), ("checkpoints",), ("code",))
        dirs += [join(base, *d) for d in folders]
        plans.append(
            ReplicaPlan(
                name=host,
                index=i,
                env=env,
                cwd=join(base, "code"),
                model_dir=join(base, "model"),
                checkpoint_dir=join(base, "checkpoints"),
                tensorboard_dir=join(base, "output", "tensorboard"),
                dirs=tuple(dirs),
                files=files,
                links={
                    join(base, "input", "data", ch): src if isinstance(src, str) else src[i]
                    for ch, src in sorted(channels.items())
                },
                # The toolkit unpacks sagemaker_submit_directory into /opt/ml/code; for a script that is its folder.
                unpack={join(base, "code"): str(package.path)} if spec.package.script else {},
            )
        )
    return plans


def sagemaker_entry_env(spec: JobSpec, hyperparameters: Mapping[str, Any], *, code_dir: str) -> dict[str, str]:
    """What the SageMaker platform and the TF container's entry set besides ``SM_*``: ``AWS_REGION``;
    ``SAGEMAKER_JOB_NAME`` (from the ``sagemaker_job_name`` hyperparameter); ``S3_REGION`` (here the job's),
    ``S3_USE_HTTPS``, ``TF_CPP_MIN_LOG_LEVEL`` (``s3_utils.configure``); ``PYTHONPATH``, here the code directory
    alone; ``PWD``, the code directory, where ``/bin/sh`` starts the script; ``PYTHONDONTWRITEBYTECODE=1``, from
    the images' Dockerfile (its ``PYTHONUNBUFFERED=1`` every local run gets)."""
    return {
        "PYTHONDONTWRITEBYTECODE": "1",
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
    distributed = [SM_GROUP] if any(framework_params.get(k) for k in (request.MWMS, request.PARAMETER_SERVER)) else []
    channels = {ch: join(base, "input", "data", ch) for ch in input_data_config}
    values: dict[str, Any] = {
        "hosts": hosts,
        "network_interface_name": resource_config.get("network_interface_name", "eth0"),
        "hps": dict(hyperparameters),
        "user_entry_point": entry_point,
        "framework_params": dict(framework_params),
        "resource_config": dict(resource_config),
        "input_data_config": dict(input_data_config),
        "output_data_dir": join(base, "output", "data"),
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
        "input_dir": join(base, "input"),
        "input_config_dir": join(base, "input", "config"),
        "output_dir": join(base, "output"),
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
        "num_neurons": 0,
        "model_dir": join(base, "model"),
        "module_dir": module_dir,
        "user_args": script_cmd_args(hyperparameters),
        "output_intermediate_dir": join(base, "output", "intermediate"),
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


class SageMakerContract:
    shards_channels = True
    machine_root: MachineRoot | None = MachineRoot("/opt/ml", "SAGEMAKER_BASE_DIR")

    def replica_names(self, n: int) -> list[str]:
        return host_names(n)

    def plan(self, spec: JobSpec, layout: ReplicaLayout) -> list[ReplicaPlan]:
        return sagemaker_plan(spec, layout)

    def script_argv(self, spec: JobSpec, plan: ReplicaPlan, python: str, package: BuiltPackage) -> list[str]:
        """The script itself, from ``<host>/code``, as the training toolkit runs it."""
        args = spec.script_args(plan.model_dir)
        if spec.package.script is None:
            raise ValueError("script_argv is for a package.script job")
        return script_main.script_command(spec.package.script, script.has_setup_py(package), args, python)


CONTRACT = SageMakerContract()
