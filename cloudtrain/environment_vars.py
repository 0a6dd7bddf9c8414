"""Every environment variable cloudtrain reads or sets for the training code: :data:`VARIABLES` here plus each backend's
``variables.py`` (:func:`every_variable`).

docs/reference/environment.md is generated from them, and tests/docs/test_environment_reference.py fails when
cloudtrain/ names a variable they lack. Code takes names from the table (``environment_vars.CACHE_DIR``); the launchers
shipped alone into a job spell them out, checked by that test. ``<NAME>`` or ``*`` stands for a family."""

from __future__ import annotations

import importlib

from cloudtrain import backend_rules


class Variable:
    """One row; a plain class, as a dry run imports this module and a dataclass would cost it a millisecond or two."""

    __slots__ = ("group", "meaning", "name", "who")

    def __init__(self, name: str, group: str, who: str, meaning: str) -> None:
        self.name = name
        self.group = group  # a key of GROUPS: the page's section
        self.who = who  # who sets it and who reads it
        self.meaning = meaning


#: The page's sections, in order, each backend's after the first (:func:`groups`): ``{group: (title, about)}``.
GROUPS = {
    "cloudtrain": ("cloudtrain itself", "What cloudtrain reads from your shell, on every backend."),
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
SWEEP_METRIC = "CLOUDTRAIN_SWEEP_METRIC"
XDG_CACHE_HOME = "XDG_CACHE_HOME"
PYTHONUNBUFFERED = "PYTHONUNBUFFERED"
VIRTUAL_ENV = "VIRTUAL_ENV"
PATH = "PATH"
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
TF_FORCE_GPU_ALLOW_GROWTH = "TF_FORCE_GPU_ALLOW_GROWTH"
TF_CONFIG = "TF_CONFIG"
CLUSTER_SPEC = "CLUSTER_SPEC"

#: The contracts' variables naming a folder the job writes to: on a cluster each exists before user code starts.
CONTRACT_FOLDERS = (
    "AIP_MODEL_DIR",
    "AIP_CHECKPOINT_DIR",
    "AIP_TENSORBOARD_LOG_DIR",
    "SM_MODEL_DIR",
    "SM_OUTPUT_DATA_DIR",
    "SM_OUTPUT_DIR",
    "SM_CHECKPOINT_DIR",
)
#: What a ``--local`` run does not pass on from your shell: variables that would fake a cloud, Python path overrides.
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


def every_variable() -> tuple[Variable, ...]:
    """:data:`VARIABLES`, then each registered backend's own rows, in registration order."""
    return VARIABLES + tuple(row for _, _, rows in _backends() for row in rows)


def groups() -> dict[str, tuple[str, str]]:
    """The page's sections: cloudtrain's, each backend's that has rows (its title), the job's, the tests'."""
    titles = backend_rules.titles()
    first, *rest = GROUPS.items()
    return dict([first, *((name, (titles[name], about)) for name, about, _ in _backends()), *rest])


def _backends() -> list[tuple[str, str, tuple[Variable, ...]]]:
    """``(name, about, rows)`` of each registered backend with a ``variables.py`` in its folder."""
    found = []
    for name in backend_rules.names():
        module = f"cloudtrain.backends.{name}.variables"
        try:
            rows = importlib.import_module(module)
        except ModuleNotFoundError as missing:  # a plugin's folder is elsewhere; a backend may have no rows
            if missing.name not in (module, module.rpartition(".")[0]):
                raise
            continue
        found.append((name, rows.ABOUT, rows.VARIABLES))
    return found


def covers(name: str) -> bool:
    """Whether the tables list ``name``, itself or as one of a family (``CLOUDTRAIN_SECRET_HF_TOKEN``)."""
    for variable in every_variable():
        stem = variable.name.split("<", 1)[0].rstrip("*")
        if name == variable.name or stem != variable.name and name.startswith(stem):
            return True
    return False


def reserved(name: str) -> str | None:
    """Who sets ``name`` in the job, where cloudtrain or its launchers do (``CLOUDTRAIN_RUN_MODULE``, a
    ``CLOUDTRAIN_SECRET_<NAME>``): a value of the config's ``env:`` would replace theirs; else None."""
    if not name.startswith("CLOUDTRAIN_"):  # the only names reserved: the backends' tables are not read
        return None
    for variable in every_variable():
        stem = variable.name.split("<", 1)[0]
        if stem.startswith("CLOUDTRAIN_") and not variable.who.startswith("you"):  # set for the job, not by you
            if name == variable.name or stem != variable.name and name.startswith(stem):
                return variable.who.split(";")[0]
    return None
