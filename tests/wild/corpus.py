"""The corpus of real-world training code (tests/packages/wild/): how each one is launched and what it should do.

Each package under tests/packages/wild/<name>/ is our own reproduction of a public TensorFlow training
package or script (its source named in its first lines), with the author's launch beside it: a gcloud
line (``launch.sh``), a SageMaker estimator (``launch.py``) or, for plain scripts from tutorials, the
cloudtrain config a user writes for it (``job.yaml``), and ``make_data.py`` writing tiny data offline.

Four steps run each one as its user would, unchanged: ``validate``, the Vertex AI and the SageMaker dry
runs, and ``--local``. A gcloud line runs through a ``gcloud`` shell function that calls cloudtrain
with the same arguments (its ``validate`` is the Vertex dry run: gcloud has no separate check); the
settings a user's environment gives (the project, a staging bucket, a SageMaker role) are the only
additions. ``EXPECTED`` says, per package and step, what the target demands: it runs (exit 0, with a
line its training prints), or the one line the cloud itself would give (exit code and words).
``PENDING`` lists the steps where cloudtrain does not do that yet, with what it does instead today,
so the gap stays visible; ``tests/wild/test_corpus.py`` and ``bench/corpus.py`` read both.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WILD = REPO / "tests" / "packages" / "wild"
STEPS = ("validate", "vertex", "sagemaker", "local")
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
CLOUD_SETTINGS = {
    "vertex": ["backend=vertex", "project=my-project", "staging_bucket=gs://my-bucket"],
    "sagemaker": ["backend=sagemaker", f"role_arn={ROLE}", "staging_bucket=s3://my-bucket"],
}


@dataclass(frozen=True)
class Outcome:
    """What a step must give: its exit code and words its output must hold (the last line's, on failure)."""

    rc: int
    says: tuple[str, ...] = ()


RUNS = Outcome(0)


#: pyenv's folder as this process finds it, given to every step (whose HOME is another).
PYENV_ROOT = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")


def old_python() -> bool:
    """Whether cloudtrain finds a Python here that TF 2.1's wheels install on (3.5–3.7), as the steps do."""
    from cloudtrain.backends.runner.interpreters import find_python

    return any(find_python(version) for version in ("3.7", "3.6", "3.5"))


def fails(rc: int, *says: str) -> Outcome:
    return Outcome(rc, says)


KERAS3 = "this is a Keras 3 error: "
#: name → how its author launches it, the data it reads (make_data.py's argument → the variable the
#: code or the launch line reads), and the outcome of each step the target demands.
PACKAGES: dict[str, dict] = {
    "census_tf_keras": {
        "launch": "gcloud",
        "data": ("tmpdir", "TMPDIR"),  # util.py reads $TMPDIR/census_data before downloading
        "sagemaker": fails(2, "is a Vertex AI bucket; SageMaker cannot use it", "--set job_dir=s3://"),
        # --runtime-version 1.13 maps to the newest image (2.17, Keras 3), where the cloud fails as here
        "local": fails(1, KERAS3, "an argument Keras 2 took (lr=, decay=, …) is gone"),
    },
    "taxifare": {"launch": "gcloud", "data": ("dir", "DATA"), "local": Outcome(0, ("exported",))},
    "taxifare_hpt_vertex": {
        "launch": "gcloud",
        "data": ("dir", "DATA"),
        "sagemaker": fails(2, "is in Vertex AI's registry, which SageMaker does not pull from"),
        "local": Outcome(0, ("exported",)),
    },
    "vertex_cifar_prebuilt": {
        "launch": "gcloud",
        "data": ("file:cifar.npz", "CIFAR_NPZ"),
        "sagemaker": fails(2, "is in Vertex AI's registry, which SageMaker does not pull from"),
        # the executor image's TensorFlow, not today's; without a Python TF 2.1 installs on, the nearest that
        # this machine's Pythons install, with the mapped: line saying so
        "local": Outcome(0, ("TensorFlow Version = 2.1.",))
        if old_python()
        else Outcome(0, ("mapped: image.tensorflow: 2.1 → 2.12", "TensorFlow Version = 2.12.")),
    },
    "sm_get_started_mnist": {
        "launch": "estimator",
        "data": ("dir", "training", "testing"),
        "vertex": fails(2, "is a SageMaker bucket; Vertex AI cannot use it", "--set output_dir=gs://"),
        "local": Outcome(0, ("Epoch 1, Loss",)),
    },
    "sm_script_mode_mnist2": {
        "launch": "estimator",
        "data": ("dir", "training"),
        "vertex": fails(2, "Vertex AI cannot read s3:// data"),
    },
    "tfdocs_custom_training": {
        "launch": "config",
        "data": ("dir", "KERAS_HOME"),
        "local": fails(1, KERAS3, "metrics' reset_states() is reset_state() in Keras 3", 'image.tensorflow: "2.15"'),
    },
    "tfdocs_multi_worker_keras": {
        "launch": "config",
        "data": ("file:mnist.npz", "MNIST_NPZ"),
        "local": fails(1, KERAS3, "Model.fit under MultiWorkerMirroredStrategy fails in Keras 3"),
    },
    "tfdocs_distribute_keras": {
        "launch": "config",
        "data": ("file:mnist.npz", "MNIST_NPZ"),
        "local": fails(1, KERAS3, "ModelCheckpoint and save_weights take a .keras or .weights.h5 file"),
    },
    "tfdocs_keras_classification": {
        "launch": "config",
        "data": ("dir", "KERAS_HOME"),
        "local": Outcome(0, ("Test accuracy:",)),
    },
    "keras_io_mnist_convnet": {
        "launch": "config",
        "data": ("file:mnist.npz", "MNIST_NPZ"),
        "local": Outcome(0, ("Test accuracy:",)),
    },
    "keras_io_structured_data": {
        "launch": "config",
        "data": ("file:heart.csv", "HEART_CSV"),
        "local": Outcome(0, ("validation accuracy:",)),
    },
}
EXPECTED: dict[tuple[str, str], Outcome] = {
    (name, step): row.get(step, RUNS) for name, row in PACKAGES.items() for step in STEPS
}

#: (package, step) → what cloudtrain does there today instead of EXPECTED, and whose part it waits on.
#: A test asserts today's behaviour for these (so a change is seen) and the target's in a separate list.
PENDING: dict[tuple[str, str], tuple[Outcome, str]] = {}


def prepare(name: str, work: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the package in ``work`` (runs never write into the repository) and its data made there:
    the package folder and the variables the launch and the code read."""
    row = PACKAGES[name]
    folder = work / name
    shutil.copytree(WILD / name, folder, ignore=shutil.ignore_patterns("__pycache__"))
    kind, *names = row["data"]
    data = work / "data"
    target = data / kind.split(":", 1)[1] if kind.startswith("file:") else data
    data.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(folder / "make_data.py"), str(target)], check=True, timeout=120)
    return folder, {n: str(target) for n in names}


def command(name: str, step: str, folder: Path, data: dict[str, str], work: Path) -> tuple[list[str], dict[str, str]]:
    """The command line of one step and the variables it runs with."""
    launch = PACKAGES[name]["launch"]
    cli = [sys.executable, "-m", "cloudtrain"]
    local = step == "local"
    variables = {
        "JOB_NAME": f"{name}_job",
        "REGION": "us-central1",
        "BUCKET": "my-bucket",
        "JOB_DIR": str(work / "job-dir") if local else f"gs://my-bucket/{name}",
        "OUTDIR": str(work / "out") if local else f"gs://my-bucket/{name}/out",
        "DATA": data.get("DATA", "gs://my-bucket/data") if local else "gs://my-bucket/data",
    }
    if launch == "gcloud":
        extra = ["--set", "project=my-project", "--set", "staging_bucket=gs://my-bucket"]
        if step == "sagemaker":
            extra += [a for s in CLOUD_SETTINGS["sagemaker"] for a in ("--set", s)]
        extra += ["--dry-run"] if not local else ["--set", "backend=local", "--set", f"output_dir={work / 'run'}"]
        shim = (
            'gcloud() { local args=() seen=0; [ "$1" = beta ] && shift\n'
            '  for a in "$@"; do\n'
            '    if [ "$a" = -- ] && [ $seen = 0 ]; then args+=("${EXTRA[@]}"); seen=1; fi; args+=("$a")\n'
            "  done\n"
            '  [ $seen = 0 ] && args+=("${EXTRA[@]}")\n'
            '  "${CLI[@]}" "${args[@]}"; }\n'
            f"CLI=({' '.join(_q(c) for c in cli)})\nEXTRA=({' '.join(_q(e) for e in extra)})\n"
            "source ./launch.sh\n"
        )
        return ["bash", "-c", shim], variables
    config = folder / "job.yaml"
    if launch == "estimator":
        config = work / f"{name}.yaml"
    if step == "validate":  # an estimator's role is the notebook's (get_execution_role()): the user gives it, as below
        given = [f"role_arn={ROLE}"] if launch == "estimator" else []
        return [*cli, "validate", str(config), *_sets(given)], variables
    if step in CLOUD_SETTINGS:
        return [*cli, "submit", "--config", str(config), "--dry-run", *_sets(CLOUD_SETTINGS[step])], variables
    sets = [f"output_dir={work / 'run'}"]
    if launch == "estimator":
        sets += [f"data.{channel}={data[channel]}" for channel in PACKAGES[name]["data"][1:]]
    return [*cli, "submit", "--config", str(config), "--local", *_sets(sets)], variables


def init_estimator(name: str, folder: Path, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``cloudtrain init --from-estimator launch.py`` in the package folder, as its user runs it."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "cloudtrain",
            "init",
            "--from-estimator",
            "launch.py",
            "--to",
            str(work / f"{name}.yaml"),
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run(
    name: str, step: str, work: Path, env: dict[str, str], timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """Run one step of one package in ``work`` (fresh per step) and return what it printed."""
    folder, data = prepare(name, work)
    env = {**env, "PYTHONPATH": str(REPO)}
    if PACKAGES[name]["launch"] == "estimator":
        made = init_estimator(name, folder, work, env)
        if made.returncode != 0:
            return made
    argv, variables = command(name, step, folder, data, work)
    env.update(variables)
    if step == "local":
        env.update({k: v for k, v in data.items() if k.isupper()})
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    started = re.search(r"reattach: cloudtrain logs (\S+) --follow", done.stdout + done.stderr)
    if step == "local" and done.returncode == 0 and started:  # a line that returns once created: follow it
        follow = [sys.executable, "-m", "cloudtrain", "logs", started[1], "--follow"]
        done = subprocess.run(follow, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    return done


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or [""])[-1]


def meets(result: subprocess.CompletedProcess[str], outcome: Outcome) -> bool:
    text = last_line(result) if outcome.rc else result.stdout + result.stderr
    return result.returncode == outcome.rc and all(s in text for s in outcome.says)


def _sets(values: list[str]) -> list[str]:
    return [a for v in values for a in ("--set", v)]


def _q(text: str) -> str:
    import shlex

    return shlex.quote(text)


def base_env(cache: Path, home: Path) -> dict[str, str]:
    """The environment of a step: this one without gcloud's or AWS's real settings, cloudtrain's cache given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLOUDSDK_", "GOOGLE_", "AWS_"))}
    env.update({"CLOUDTRAIN_CACHE_DIR": str(cache), "CLOUDSDK_CONFIG": str(home / "gcloud"), "HOME": str(home)})
    env["PYENV_ROOT"] = PYENV_ROOT
    return env
