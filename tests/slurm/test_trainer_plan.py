"""The trainer's plan under Slurm: it names Slurm, the job's nodes and the GPUs per node, from the
variables the launcher and Slurm set (no cluster needed: the values are what a launcher's task gets)."""

from __future__ import annotations

from trainer.plan import plan_batches, render_plan, slurm_placement

#: A task's environment as the launcher hands it on (the Vertex AI contract's variables beside Slurm's).
TASK_ENV = {
    "AIP_MODEL_DIR": "/fsx/cloudtrain/runs/demo/model/",
    "SLURM_JOB_ID": "42",
    "SLURM_JOB_NODELIST": "gpu-[1-2]",
    "SLURMD_NODENAME": "gpu-2",
    "SLURM_GPUS_PER_NODE": "h100:8",
    "CLOUDTRAIN_SLURM_NODES": "gpu-1,gpu-2",
    "CLOUDTRAIN_SLURM_GPUS_PER_NODE": "8",
}


def plan_of(slurm: dict | None) -> dict:
    return {
        "platform": "vertex",
        "job_id": None,
        "slurm": slurm,
        "task": "worker:0",
        "workers": 2,
        "devices": ["CPU:0"],
        "strategy": "multi_worker_mirrored",
        "strategy_reason": "2 workers in TF_CONFIG",
        "precision": "float32",
        "precision_reason": "no GPU",
        "batch": plan_batches(64, 2, 0.001, 1000).as_dict(),
        "lr_schedule": "constant",
        "warmup_epochs": 0,
        "data": {
            "name": "digits",
            "source": "sklearn",
            "train_examples": 1000,
            "val_examples": 100,
            "input_shape": [8, 8, 1],
            "num_classes": 10,
        },
        "model": "cnn",
        "epochs": 1,
        "dirs": {},
        "dirs_origin": {},
    }


def test_under_slurm_the_plan_names_slurm_the_nodes_and_the_gpus_per_node():
    placement = slurm_placement(TASK_ENV)
    assert placement == {"job_id": "42", "nodes": ["gpu-1", "gpu-2"], "node": "gpu-2", "gpus_per_node": 8}
    text = render_plan(plan_of(placement))
    assert "platform          slurm  job=42  task=worker:0" in text
    assert "nodes             gpu-1, gpu-2 (2 x 8 GPUs per node); this task on gpu-2" in text


def test_without_the_launchers_variables_slurms_own_are_read():
    env = {k: v for k, v in TASK_ENV.items() if not k.startswith("CLOUDTRAIN_")}
    assert slurm_placement(env) == {"job_id": "42", "nodes": ["gpu-[1-2]"], "node": "gpu-2", "gpus_per_node": 8}
    cpu = {k: v for k, v in env.items() if k != "SLURM_GPUS_PER_NODE"}
    assert (slurm_placement(cpu) or {}).get("gpus_per_node") == 0


def test_outside_slurm_the_plan_names_the_platform():
    assert slurm_placement({"AIP_MODEL_DIR": "gs://b/model/"}) is None
    text = render_plan(plan_of(None))
    assert "platform          vertex  job=-  task=worker:0" in text and "nodes " not in text
