"""Batch and learning-rate arithmetic, and the plan block printed at start.

The per-replica batch is what the user sets and stays fixed; the global batch
grows with the replicas. One source article halved the per-GPU batch instead
and 2 GPUs came out slower than one. The learning rate scales linearly with
the replicas (``--no-lr-scaling`` turns that off). No TensorFlow here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from trainer.errors import TrainerError


@dataclass(frozen=True)
class BatchPlan:
    per_replica_batch: int
    replicas: int
    global_batch: int
    base_lr: float
    lr: float
    lr_scaled: bool
    train_examples: int
    steps_per_epoch: int

    def as_dict(self) -> dict:
        return asdict(self)


def plan_batches(
    per_replica_batch: int,
    replicas: int,
    base_lr: float,
    train_examples: int,
    *,
    scale_lr: bool = True,
    max_steps_per_epoch: int | None = None,
) -> BatchPlan:
    """Steps per epoch count full global batches only (the training input repeats,
    so the remainder rolls into the next epoch rather than being lost)."""
    if per_replica_batch < 1:
        raise TrainerError(f"--batch-size must be >= 1, got {per_replica_batch}")
    if replicas < 1:
        raise TrainerError(f"need at least one replica, got {replicas}")
    if base_lr <= 0:
        raise TrainerError(f"--lr must be > 0, got {base_lr}")
    global_batch = per_replica_batch * replicas
    steps = train_examples // global_batch
    if steps < 1:
        raise TrainerError(
            f"the training set has {train_examples} examples, fewer than one global batch of {global_batch} "
            f"({per_replica_batch} per replica x {replicas} replicas); lower --batch-size"
        )
    if max_steps_per_epoch:
        steps = min(steps, max_steps_per_epoch)
    return BatchPlan(
        per_replica_batch=per_replica_batch,
        replicas=replicas,
        global_batch=global_batch,
        base_lr=base_lr,
        lr=base_lr * replicas if scale_lr else base_lr,
        lr_scaled=scale_lr and replicas > 1,
        train_examples=train_examples,
        steps_per_epoch=steps,
    )


#: What cloudtrain's Slurm launcher adds to a task's environment (beside Slurm's own ``SLURM_*``).
SLURM_NODES_VAR = "CLOUDTRAIN_SLURM_NODES"  # the job's nodes, comma-separated (``scontrol show hostnames``)
SLURM_GPUS_VAR = "CLOUDTRAIN_SLURM_GPUS_PER_NODE"


def slurm_placement(environ: Mapping[str, str]) -> dict | None:
    """Where a task started by a Slurm launcher runs: the Slurm job, its nodes, this task's node and the
    GPUs per node; None outside Slurm. The task reads the Vertex AI contract there, so without this the
    plan would name Vertex AI."""
    job_id = environ.get("SLURM_JOB_ID")
    if not job_id:
        return None
    nodes = environ.get(SLURM_NODES_VAR) or environ.get("SLURM_JOB_NODELIST") or ""
    # SLURM_GPUS_PER_NODE is "4" or "a100:4" where --gpus-per-node was given; unset on CPU nodes
    gpus = (environ.get(SLURM_GPUS_VAR) or environ.get("SLURM_GPUS_PER_NODE") or "0").rsplit(":", 1)[-1]
    return {
        "job_id": job_id,
        "nodes": [n for n in nodes.split(",") if n],
        "node": environ.get("SLURMD_NODENAME") or None,
        "gpus_per_node": int(gpus) if gpus.isdigit() else 0,
    }


def _line(label: str, value: object) -> str:
    return f"  {label:<18}{value}"


def render_plan(plan: Mapping[str, Any]) -> str:
    """The human-readable block; ``plan`` is the same dict the plan event carries."""
    batch = plan["batch"]
    data = plan["data"]
    lines = ["=" * 72, "cloudtrain trainer plan", "-" * 72]
    slurm = plan.get("slurm")
    if isinstance(slurm, Mapping):
        lines.append(_line("platform", f"slurm  job={slurm['job_id']}  task={plan['task']}"))
        gpus = slurm["gpus_per_node"]
        lines.append(
            _line(
                "nodes",
                f"{', '.join(slurm['nodes']) or '-'} ({len(slurm['nodes'])} x {gpus} GPU{'' if gpus == 1 else 's'} "
                f"per node); this task on {slurm['node'] or '-'}",
            )
        )
    else:
        lines.append(_line("platform", f"{plan['platform']}  job={plan.get('job_id') or '-'}  task={plan['task']}"))
    devices = plan["devices"]
    lines.append(_line("devices", devices[0] if devices else "-"))
    lines += [_line("", d) for d in devices[1:]]
    lines.append(_line("strategy", f"{plan['strategy']}  ({plan['strategy_reason']})"))
    if plan.get("tpu"):
        t = plan["tpu"]
        lines.append(_line("TPU", f"{t['type']}, {t['cores']} cores, topology {t['topology']}"))
    if plan.get("tpu_rules"):
        lines.append(
            _line("TPU rules", f"static shapes, steps per call {plan.get('steps_per_execution')}; {plan['tpu_rules']}")
        )
    lines.append(_line("workers", plan["workers"]))
    lines.append(_line("replicas in sync", batch["replicas"]))
    lines.append(_line("precision", f"{plan['precision']}  ({plan['precision_reason']})"))
    lines.append(
        _line(
            "batch",
            f"{batch['per_replica_batch']} per replica x {batch['replicas']} = {batch['global_batch']} global",
        )
    )
    if batch["lr_scaled"]:
        lr = f"{batch['lr']:g} = {batch['base_lr']:g} x {batch['replicas']} replicas"
    else:
        lr = f"{batch['lr']:g} (not scaled)"
    lines.append(_line("learning rate", f"{lr}; schedule {plan['lr_schedule']}, warmup {plan['warmup_epochs']} epochs"))
    lines.append(_line("dataset", f"{data['name']}  [{data['source']}]"))
    lines.append(
        _line(
            "",
            f"train {data['train_examples']}, validation {data['val_examples']}, "
            f"input {tuple(data['input_shape'])}, {data['num_classes']} classes",
        )
    )
    lines.append(_line("model", f"{plan['model']}  ({plan.get('params', '?')} parameters)"))
    lines.append(_line("epochs", f"{plan['epochs']} x {batch['steps_per_epoch']} steps"))
    if plan.get("preemption", {}).get("handler"):
        lines.append(_line("on notice", plan["preemption"]["handler"]))
    elif plan.get("preemption"):
        p = plan["preemption"]
        calls = plan.get("steps_per_execution", "auto")
        calls = f"{calls} steps per call" if isinstance(calls, int) else calls
        lines.append(
            _line(
                "on notice",
                f"{p['notice']}: checkpoint after this call ({calls}), "
                f"grace {p['grace_period_s']:g} s, exit {p['exit_code']}",
            )
        )
    for key in ("model_dir", "checkpoint_dir", "tensorboard_dir", "output_dir"):
        if plan["dirs"].get(key):
            origin = plan["dirs_origin"].get(key, "")
            lines.append(_line(key.replace("_", " "), f"{plan['dirs'][key]}  ({origin})"))
    spe = batch["steps_per_epoch"]
    if plan.get("resume_step") and plan["resume_step"] % spe:  # saved on a notice, mid-epoch
        lines.append(
            _line(
                "resume",
                f"from step {plan['resume_step']} (epoch {plan['resume_step'] // spe + 1}, "
                f"step {plan['resume_step'] % spe} of {spe})",
            )
        )
    elif plan.get("resume_epoch"):
        resume = f"from epoch {plan['resume_epoch']} checkpoint"
        if plan["resume_epoch"] >= plan["epochs"]:
            resume += " (finished: nothing to train; --no-resume or a new --job-dir starts over)"
        lines.append(_line("resume", resume))
    lines.append("=" * 72)
    return "\n".join(lines)
