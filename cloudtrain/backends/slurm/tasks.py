"""The tasks' plan (``tasks.json``) the launcher reads on each node: every task's command, folder and variables
under the contract every Slurm job follows (the Vertex AI contract's ``AIP_*`` folders, ``TF_CONFIG``), asked of
its backend through the registry at submit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from cloudtrain import environment_vars
from cloudtrain.backends.runner import contract
from cloudtrain.backends.slurm.script import package_path, tasks_per_node
from cloudtrain.data.schemes import channel_env
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec

GRACE_PERIOD_VAR = environment_vars.PREEMPTION_GRACE  # trainer.preemption.GRACE_VAR: save at once on SIGTERM


def tasks_plan(spec: JobSpec, package: BuiltPackage, python: str, channels: dict[str, str]) -> dict[str, Any]:
    """Each task's command, folder and variables: the Vertex contract (``AIP_*`` dirs under the run,
    ``TF_CONFIG``/``CLUSTER_SPEC`` whose addresses the launcher fills in), ``SM_CHANNEL_<NAME>`` at
    ``channels`` (each channel's folder on the cluster: :mod:`.data`)."""
    run = spec.output_dir.rstrip("/")
    on_cluster = replace(package, path=Path(package_path(spec, package)))
    per_node = tasks_per_node(spec)
    tasks_total = spec.replica_count * per_node  # one task per GPU: each a replica of the contract (TF_CONFIG)
    plans = contract.plan(
        replace(spec, replica_count=tasks_total) if per_node > 1 else spec,
        output_dir=run,
        ports=[0] * tasks_total,
        package=on_cluster,
        num_gpus=1 if per_node > 1 else spec.machine.accelerator_count,
    )
    tasks = []
    for p in plans:
        env = {**spec.env, **p.env, GRACE_PERIOD_VAR: "0", environment_vars.PYTHONUNBUFFERED: "1"}
        env.update({channel_env(name): folder for name, folder in channels.items()})
        tasks.append(
            {
                "name": p.name,
                "argv": contract.argv(spec, p, python, on_cluster),
                "cwd": f"{run}/slurm/work/{p.name}",  # not the contract's local-run/: a Slurm job is no local run
                "env": env,
                "dirs": contract_dirs(p, env),
            }
        )
    return {
        "job_name": spec.job_name,
        "run": run,
        "gpus_per_node": spec.machine.accelerator_count,
        "gpus_per_task": 1 if per_node > 1 else spec.machine.accelerator_count,
        "tasks": tasks,
    }


#: The contract's output folders by their variables: each exists when the user's code starts (issue #40).
CONTRACT_DIR_VARS = environment_vars.CONTRACT_FOLDERS


def contract_dirs(plan: Any, env: dict[str, str]) -> list[str]:
    """The folders the launcher makes before the task's command: the plan's model, checkpoint and
    TensorBoard folders, and every contract variable's folder on the cluster's filesystem."""
    dirs = [plan.model_dir, plan.checkpoint_dir, plan.tensorboard_dir]
    dirs += [env[v] for v in CONTRACT_DIR_VARS if env.get(v, "").startswith("/")]
    return list(dict.fromkeys(dirs))
