"""The environment variables the Slurm backend reads or sets: its section of docs/reference/environment.md
(gathered by :func:`cloudtrain.environment_vars.every_variable`)."""

from __future__ import annotations

from cloudtrain.environment_vars import Variable

ABOUT = "What the Slurm backend reads on your machine, and its launcher on the nodes."
SSH_CONFIG = "CLOUDTRAIN_SSH_CONFIG"

VARIABLES = (
    Variable(
        SSH_CONFIG,
        "slurm",
        "you; the Slurm backend",
        "another ssh config file for the login node (`ssh -F`); default ssh's own ([Slurm](../how-to/slurm.md))",
    ),
    Variable("SLURM_JOB_ID", "slurm", "Slurm; the launcher on the nodes", "the job's id, in the run's status"),
    Variable(
        "SLURM_JOB_NODELIST", "slurm", "Slurm; the launcher on the nodes", "the job's nodes, expanded to host names"
    ),
    Variable("SLURM_PROCID", "slurm", "Slurm; the launcher on the nodes", "the task's rank: its replica"),
    Variable(
        "SLURM_LOCALID",
        "slurm",
        "Slurm; the launcher on the nodes",
        "the task's index on its node: its GPU (`CUDA_VISIBLE_DEVICES`) with `slurm.tasks_per_node: gpus`",
    ),
    Variable(
        "CLOUDTRAIN_CLEAN_ENV",
        "slurm",
        "the batch script, for itself",
        "set when the batch script has restarted itself in a clean environment (`env -i`), so it does so once",
    ),
    Variable(
        "SLURM_ARRAY_JOB_ID",
        "slurm",
        "Slurm; a sweep's array task on the nodes",
        "the sweep's array job: the trial script finds its journal and folder by it",
    ),
    Variable(
        "SLURM_ARRAY_TASK_ID",
        "slurm",
        "Slurm; a sweep's array task on the nodes",
        "the array task's index: which trial of the sweep it runs",
    ),
    Variable("SLURMD_NODENAME", "slurm", "Slurm; the launcher on the nodes", "the node the task runs on"),
    Variable("SLURM_RESTART_COUNT", "slurm", "Slurm; the launcher on the nodes", "how often the job was requeued"),
    Variable(
        "CLOUDTRAIN_SLURM_NODES",
        "slurm",
        "the Slurm launcher; the bundled trainer",
        "the job's nodes, comma-separated, for the trainer's plan",
    ),
    Variable(
        "CLOUDTRAIN_SLURM_GPUS_PER_NODE",
        "slurm",
        "the Slurm launcher; the bundled trainer",
        "the GPUs each node gives the job",
    ),
)
