"""Every environment variable cloudtrain reads, and every one it sets for the training code: the one table.

docs/reference/environment.md is generated from :data:`VARIABLES` (``make docs``,
tools/environment_reference.py), and a test (tests/docs/test_environment_reference.py) fails when a
module of cloudtrain/ reads or names a variable this table lacks. Code that reads one of cloudtrain's own
variables takes its name from here (``environment_vars.VERTEX_ENDPOINT``); the launchers that run
inside a job (``cloudtrain_launch.py``, the secrets launcher, the Slurm launcher) are shipped alone, so
they spell the name themselves and the test checks it against the table.

A name with ``<NAME>`` or ``*`` stands for a family (``CLOUDTRAIN_SECRET_<NAME>``, ``AIP_*``).
"""

from __future__ import annotations


class Variable:
    """One row. A plain class: a dry run imports this module (the sweep metric's name), and a
    ``NamedTuple`` or dataclass would cost it a millisecond or two to build."""

    __slots__ = ("group", "meaning", "name", "who")

    def __init__(self, name: str, group: str, who: str, meaning: str) -> None:
        self.name = name
        self.group = group  # a key of GROUPS: the page's section
        self.who = who  # who sets it and who reads it
        self.meaning = meaning


#: The page's sections, in order: ``{group: (title, what the section is about)}``.
GROUPS = {
    "cloudtrain": ("cloudtrain itself", "What cloudtrain reads from your shell, on every backend."),
    "vertex": ("Vertex AI", "What the Vertex AI backend reads from your shell."),
    "sagemaker": ("SageMaker", "What the SageMaker backend and boto3 read from your shell."),
    "slurm": ("Slurm", "What the Slurm backend reads on your machine, and its launcher on the nodes."),
    "kubernetes": ("Kubernetes", "What the Kubernetes backend reads on your machine, and its launcher in the pods."),
    "job": (
        "What the training code gets",
        "Set in the job by the cloud, by `--local` alike, or by cloudtrain's launchers; read by your code, "
        "the bundled trainer and the launchers. A `--local` run does not pass on variables of your shell "
        "that would fake a cloud (`AIP_*`, `SM_*`, `TF_CONFIG`, `CLUSTER_SPEC`, `VIRTUAL_ENV`, …).",
    ),
    "tests": ("Tests only", "Read by cloudtrain's own test suite, never by cloudtrain."),
}

CACHE_DIR = "CLOUDTRAIN_CACHE_DIR"
PREEMPTION_GRACE = "CLOUDTRAIN_PREEMPTION_GRACE_S"
VERTEX_ENDPOINT = "CLOUDTRAIN_VERTEX_ENDPOINT"
LOGGING_ENDPOINT = "CLOUDTRAIN_LOGGING_ENDPOINT"
LOG_READS_PER_MINUTE = "CLOUDTRAIN_LOG_READS_PER_MINUTE"
SSH_CONFIG = "CLOUDTRAIN_SSH_CONFIG"
SWEEP_METRIC = "CLOUDTRAIN_SWEEP_METRIC"
XDG_CACHE_HOME = "XDG_CACHE_HOME"
STORAGE_EMULATOR_HOST = "STORAGE_EMULATOR_HOST"
PYTHONUNBUFFERED = "PYTHONUNBUFFERED"
VIRTUAL_ENV = "VIRTUAL_ENV"
PATH = "PATH"
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
TF_FORCE_GPU_ALLOW_GROWTH = "TF_FORCE_GPU_ALLOW_GROWTH"
TF_CONFIG = "TF_CONFIG"
CLUSTER_SPEC = "CLUSTER_SPEC"

#: The contracts' variables (rows ``AIP_*``, ``SM_*``) that name a folder the job writes to: on a machine
#: cloudtrain reaches itself (a Slurm cluster), each exists when the user's code starts (issue #40).
CONTRACT_FOLDERS = (
    "AIP_MODEL_DIR",
    "AIP_CHECKPOINT_DIR",
    "AIP_TENSORBOARD_LOG_DIR",
    "SM_MODEL_DIR",
    "SM_OUTPUT_DATA_DIR",
    "SM_OUTPUT_DIR",
    "SM_CHECKPOINT_DIR",
)
#: What a ``--local`` run does not pass on from your shell (the ``job`` section's words): variables that would
#: fake a cloud (a contract from an earlier run) and Python path overrides no cloud machine has.
NOT_PASSED_ON = (
    TF_CONFIG,
    CLUSTER_SPEC,
    "TRAINING_JOB_NAME",
    "CURRENT_HOST",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    VIRTUAL_ENV,
    CUDA_VISIBLE_DEVICES,
)
#: The families a ``--local`` run does not pass on from your shell, by their names' beginnings.
NOT_PASSED_ON_PREFIXES = ("AIP_", "SM_", "CLOUD_ML_", "SAGEMAKER_")

VARIABLES: tuple[Variable, ...] = (
    Variable(
        CACHE_DIR,
        "cloudtrain",
        "you; every command",
        "moves the cache (packages, local environments, downloaded data, job history); default "
        "`$XDG_CACHE_HOME/cloudtrain`, else `~/.cache/cloudtrain` ([local runs](../how-to/local.md))",
    ),
    Variable(
        XDG_CACHE_HOME, "cloudtrain", "you; every command", "the cache's parent when `CLOUDTRAIN_CACHE_DIR` is unset"
    ),
    Variable(
        "FORCE_COLOR", "cloudtrain", "you; the console", "colour and progress bars even when stderr is not a terminal"
    ),
    Variable(
        "UV",
        "cloudtrain",
        "you; the local backend",
        "the `uv` that builds a local run's environment; default `uv` on PATH",
    ),
    Variable(
        "PYENV_ROOT", "cloudtrain", "you; the local backend", "where pyenv's Pythons are found for a local environment"
    ),
    Variable(
        VERTEX_ENDPOINT,
        "vertex",
        "you; the Vertex backend",
        "`host:port` of the Vertex API; default `{region}-aiplatform.googleapis.com` (`{region}` is filled in: "
        "private endpoints work); a `127.0.0.1` / `localhost` endpoint is spoken to over plain-text gRPC with "
        "anonymous credentials",
    ),
    Variable(
        LOGGING_ENDPOINT,
        "vertex",
        "you; the Vertex backend",
        "`host:port` of Cloud Logging; default `logging.googleapis.com`",
    ),
    Variable(
        LOG_READS_PER_MINUTE, "vertex", "you; the Vertex backend", "log-read budget when polling alone; default 50"
    ),
    Variable(
        STORAGE_EMULATOR_HOST,
        "vertex",
        "you; google-cloud-storage, the Vertex and local backends",
        "google-cloud-storage's own emulator setting: uploads and downloads go to it",
    ),
    Variable(
        "GOOGLE_APPLICATION_CREDENTIALS",
        "vertex",
        "you; google-auth",
        "Application Default Credentials; without any, the error says to run `gcloud auth application-default login`",
    ),
    Variable(
        "GOOGLE_CLOUD_PROJECT",
        "vertex",
        "you; the Vertex backend",
        "the project when the config and gcloud name none (the order: "
        "[From ML Engine and gcloud](../how-to/migrate-from-ml-engine.md))",
    ),
    Variable(
        "CLOUDSDK_CORE_PROJECT",
        "vertex",
        "you; the Vertex backend",
        "the project, as gcloud reads it, before gcloud's config",
    ),
    Variable(
        "CLOUDSDK_CONFIG",
        "vertex",
        "you; the Vertex backend",
        "gcloud's configuration folder; default `~/.config/gcloud`",
    ),
    Variable(
        "CLOUDSDK_ACTIVE_CONFIG_NAME",
        "vertex",
        "you; the Vertex backend",
        "which gcloud configuration is active; default the one in `active_config`",
    ),
    Variable(
        "AWS_PROFILE",
        "sagemaker",
        "you; boto3",
        "boto3's credential chain (`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`, …); without credentials the error says "
        "to run `aws configure`",
    ),
    Variable(
        "AWS_ENDPOINT_URL",
        "sagemaker",
        "you; boto3",
        "another endpoint (or per service `AWS_ENDPOINT_URL_S3`, `_SAGEMAKER`, `_CLOUDWATCH_LOGS`); the tests point "
        "it at moto. With an endpoint set, `StartLiveTail` goes to it as it is, without the `stream-` host prefix",
    ),
    Variable(
        "AWS_MAX_ATTEMPTS",
        "sagemaker",
        "you; the SageMaker backend, boto3",
        "the attempts of a retried call; default 5 ([exit codes](exit-codes.md))",
    ),
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
    Variable(
        "KUBECONFIG", "kubernetes", "the kubernetes client", "the kubeconfig files (contexts) a job is submitted to"
    ),
    Variable(
        "JOB_COMPLETION_INDEX",
        "kubernetes",
        "Kubernetes (an indexed Job's pods); the launcher in the pods",
        "the pod's index: its replica (0 is the chief)",
    ),
    Variable("PYTHONPATH", "kubernetes", "the launcher in the pods", "the unpacked package goes first on it"),
    Variable(
        "CLOUDTRAIN_NODE", "kubernetes", "the launcher in the pods", "the node the pod runs on, for its first line"
    ),
    Variable(
        "CLOUDTRAIN_SUBDOMAIN",
        "kubernetes",
        "the launcher in the pods",
        "the headless Service the replicas' names are under, for TF_CONFIG",
    ),
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
    Variable(
        "AIP_*",
        "job",
        "Vertex AI, `--local`; your code",
        "Vertex's contract (`AIP_MODEL_DIR`, `AIP_CHECKPOINT_DIR`, …; [local runs](../how-to/local.md))",
    ),
    Variable("CLOUD_ML_JOB_ID", "job", "Vertex AI, `--local`; your code", "the job's name"),
    Variable(
        CLUSTER_SPEC,
        "job",
        "Vertex AI, `--local`, the Slurm launcher; your code, script mode's entry",
        "the replicas of a multi-replica job, Vertex's form",
    ),
    Variable(
        TF_CONFIG, "job", "the clouds, `--local`, the Slurm launcher; TensorFlow", "the cluster, TensorFlow's form"
    ),
    Variable(
        "SM_*",
        "job",
        "SageMaker, `--local`; your code",
        "SageMaker's contract (`SM_MODEL_DIR`, `SM_NUM_GPUS`, `SM_INPUT_CONFIG_DIR`, …)",
    ),
    Variable(
        "SM_CHANNEL_<NAME>",
        "job",
        "SageMaker, `--local`; your code",
        "a data channel's folder ([data](../how-to/data.md))",
    ),
    Variable(
        PREEMPTION_GRACE,
        "job",
        "the local and Slurm backends; the bundled trainer",
        "the trainer's grace period after a preemption notice; default 20 s on Vertex, 90 s on SageMaker, 0 locally "
        "([spot and preemption](../how-to/preemption-and-spot.md))",
    ),
    Variable(
        SWEEP_METRIC,
        "job",
        "cloudtrain, in a sweep's trials; the bundled trainer",
        "the metric the sweep optimises ([sweeps](../how-to/sweeps.md))",
    ),
    Variable(
        "CLOUDTRAIN_SECRET_<NAME>",
        "job",
        "cloudtrain, for a job with `secrets:`; the secrets launcher",
        "a secret's reference (never its value), resolved in the job into `<NAME>` ([secrets](../how-to/secrets.md))",
    ),
    Variable(
        "CLOUDTRAIN_RUN_MODULE", "job", "cloudtrain; the launchers", "the module a launcher runs after its set-up"
    ),
    Variable(
        "CLOUDTRAIN_SECRETMANAGER_ENDPOINT",
        "job",
        "you, tests; the secrets launcher",
        "`host:port` of Secret Manager for the launcher that reads `secrets:`",
    ),
    Variable(
        "GCE_METADATA_HOST",
        "job",
        "the platform; the secrets launcher",
        "the metadata server the launcher asks for a token",
    ),
    Variable(
        PYTHONUNBUFFERED,
        "job",
        "the local and Slurm backends; Python",
        "`1`: the job's lines reach the logs as printed",
    ),
    Variable(
        VIRTUAL_ENV,
        "job",
        "the local backend; Python tools",
        "a local run's environment (and its `bin/` first on `PATH`)",
    ),
    Variable(PATH, "job", "the local backend", "a local run's environment's `bin/` first"),
    Variable(CUDA_VISIBLE_DEVICES, "job", "the local backend; CUDA", "the GPUs a local run's replica sees"),
    Variable(
        TF_FORCE_GPU_ALLOW_GROWTH, "job", "the local backend; TensorFlow", "replicas sharing a GPU grow their memory"
    ),
    Variable(
        "CLOUDTRAIN_TEST_ENV_CACHE",
        "tests",
        "you; the tests",
        "where TensorFlow test environments are shared; default `.test-cache/envs/` in the repository "
        "([development and tests](../how-to/develop-and-test.md))",
    ),
    Variable(
        "CLOUDTRAIN_UPDATE_GOLDEN", "tests", "you; the tests", "rewrite the golden request files instead of comparing"
    ),
)


def covers(name: str) -> bool:
    """Whether the table lists ``name``, itself or as one of a family (``CLOUDTRAIN_SECRET_HF_TOKEN``)."""
    for variable in VARIABLES:
        stem = variable.name.split("<", 1)[0].rstrip("*")
        if name == variable.name or stem != variable.name and name.startswith(stem):
            return True
    return False


def reserved(name: str) -> str | None:
    """Who sets ``name`` in the job, where cloudtrain or its launchers do (``CLOUDTRAIN_RUN_MODULE``, a
    ``CLOUDTRAIN_SECRET_<NAME>``): a value of the config's ``env:`` would replace theirs; else None."""
    for variable in VARIABLES:
        stem = variable.name.split("<", 1)[0]
        if stem.startswith("CLOUDTRAIN_") and not variable.who.startswith("you"):  # set for the job, not by you
            if name == variable.name or stem != variable.name and name.startswith(stem):
                return variable.who.split(";")[0]
    return None
