"""One trial of a Slurm sweep, on the node its array task runs on: ask Optuna, then tell it.

Runs on the cluster with the sweep tool's Python (Optuna of the submitting cloudtrain's version), standard library
and Optuna only: cloudtrain copies this file (and ``seeding.py``) into ``<sweep>/slurm/``. The journal
(``<sweep>/optuna.journal``) is on the shared workdir and Optuna locks it for each write, so tasks on several nodes
share one study.

``ask SWEEP [RERUN]``: writes the next trial's run folder (``<sweep>/trial-NNN``: batch script, tasks plan,
launcher, a link to the sweep's 0600 secrets if any) and ``<workdir>/jobs/<array>_<task>`` (so commands find the
trial by its Slurm id), and prints the folder. With ``RERUN`` (``3,5``, trials a resumed sweep runs again) task
*i* takes trial RERUN[i] under its own number and parameters; a requeued task gets its own trial again.

``tell SWEEP RUN EXIT [STOPPED]``: COMPLETE with the chief's last ``metric`` line (else the ``epoch`` events'
field), or FAIL with a message. Nothing is told for a requeued task, one Slurm stopped (SIGTERM: ``scancel`` or a
preemption) or a cancelled sweep: those stay RUNNING for ``cloudtrain sweep resume``. After
``max_failed_trials`` failures the array's pending tasks are cancelled."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

EVENT_PREFIX = '{"event"'
SECRETS = "secrets.json"  # the sweep's secret values and mask (cloudtrain.backends.slurm.job_secrets), mode 0600


def load(path: str) -> Any:
    with open(path) as f:
        return json.load(f)


def write(path: str, text: str, mode: int) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def study_of(sweep_dir: str, state: dict[str, Any], create: bool) -> Any:
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = JournalStorage(JournalFileBackend(os.path.join(sweep_dir, "optuna.journal")))
    sampler = sampler_of(state)
    if create:
        return optuna.create_study(
            study_name=state["job_name"],
            storage=storage,
            direction=state["goal"],
            sampler=sampler,
            load_if_exists=True,
        )
    return optuna.load_study(study_name=state["job_name"], storage=storage, sampler=sampler)


def sampler_of(state: dict[str, Any]) -> Any:
    """The sampler a local sweep builds (cloudtrain.app.sweeps.local._sampler), from the sweep's state."""
    import optuna

    algorithm, seed, params = state["algorithm"], state["seed"], state["params"]

    def make(seed: int | None) -> Any:
        if algorithm == "grid":
            return optuna.samplers.GridSampler({p["name"]: grid_values(p) for p in params}, seed=seed)
        if algorithm == "random":
            return optuna.samplers.RandomSampler(seed=seed)
        return optuna.samplers.TPESampler(seed=seed)

    if seed is None or algorithm == "grid":
        return make(seed)
    import importlib.util

    # cloudtrain.sweeps.seeding, copied beside this file: the same draws per (seed, trial number) as a local sweep
    found = importlib.util.spec_from_file_location("seeding", os.path.join(os.path.dirname(__file__), "seeding.py"))
    if found is None or found.loader is None:
        raise SystemExit("cloudtrain sweep_trial: seeding.py is missing beside it")
    seeding = importlib.util.module_from_spec(found)
    found.loader.exec_module(seeding)
    return seeding.PerTrialSeedSampler(make, seed)


def grid_values(param: dict[str, Any]) -> list[Any]:
    if param["kind"] == "integer":
        return list(range(int(param["min"]), int(param["max"]) + 1))
    return list(param["values"])


def suggest(trial: Any, param: dict[str, Any]) -> Any:
    kind, name = param["kind"], param["name"]
    if kind == "double":
        return trial.suggest_float(name, param["min"], param["max"], log=param["scale"] == "log")
    if kind == "integer":
        return trial.suggest_int(name, int(param["min"]), int(param["max"]), log=param["scale"] == "log")
    return trial.suggest_categorical(name, list(param["values"]))


def format_value(value: Any) -> str:
    """As cloudtrain.sweeps.params.format_value: how a value is written on the command line."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return str(value)


def filled(template: str, run: str, job_name: str, values: dict[str, Any], quote: Callable[[str], str]) -> str:
    """``template`` with each placeholder replaced by its value quoted for where it stands (a shell word,
    the inside of a JSON string): the run folder is text of the user's (``slurm.workdir``), never code."""
    text = template.replace("@RUN@", quote(run)).replace("@JOB@", quote(job_name))
    for name, value in values.items():
        text = text.replace(f"@P:{name}@", quote(format_value(value)))
    return text


def ask(sweep_dir: str, rerun: str) -> None:
    import optuna

    state = load(os.path.join(sweep_dir, "sweep.json"))
    array, index = os.environ["SLURM_ARRAY_JOB_ID"], int(os.environ["SLURM_ARRAY_TASK_ID"])
    job_id = f"{array}_{index}"
    claim = os.path.join(state["workdir"], "jobs", job_id)
    if os.path.exists(claim):  # a requeued task: its own trial again, in its own folder
        with open(claim) as f:
            print(f.read().strip())
        return
    study = study_of(sweep_dir, state, create=True)
    numbers = [int(n) for n in rerun.split(",") if n.strip()]
    if index < len(numbers):
        storage = study._storage
        trial_id = storage.get_trial_id_from_study_id_trial_number(study._study_id, numbers[index])
        trial = optuna.trial.Trial(study, trial_id)  # its recorded params come back from suggest
    else:
        trial = study.ask()
    values = {p["name"]: suggest(trial, p) for p in state["params"]}
    number = trial.number
    run = os.path.join(sweep_dir, f"trial-{number:03d}")
    job_name = f"{state['job_name']}-t{number:03d}"
    slurm = os.path.join(run, "slurm")
    previous = trial.user_attrs.get("job_id")
    if previous and os.path.isdir(slurm):  # a rerun: the interrupted run's records kept beside the new ones
        os.replace(slurm, f"{slurm}-{previous}")
    os.makedirs(slurm, exist_ok=True)
    templates = os.path.join(sweep_dir, "slurm")
    with open(os.path.join(templates, "tasks.template.json")) as f:
        tasks = filled(f.read(), run, job_name, values, lambda text: json.dumps(text)[1:-1])
    with open(os.path.join(templates, "job.template.sh")) as f:
        job = filled(f.read(), run, job_name, values, shlex.quote)
    write(os.path.join(slurm, "tasks.json"), tasks, 0o600)
    write(os.path.join(slurm, "job.sh"), job, 0o755)
    shutil.copyfile(os.path.join(templates, "launcher.py"), os.path.join(slurm, "launcher.py"))
    if os.path.exists(os.path.join(templates, SECRETS)):  # the sweep's one 0600 file: linked, never copied
        os.symlink(os.path.join("..", "..", "slurm", SECRETS), os.path.join(slurm, SECRETS))
    trial.set_user_attr("job_id", job_id)
    trial.set_user_attr("output_dir", run)
    os.makedirs(os.path.dirname(claim), exist_ok=True)
    write(claim, run, 0o644)
    # the trial's full name (<cluster>:<run>) finds it as a job's does (cloudtrain.backends.slurm.job.id_file)
    write(os.path.join(slurm, "id.json"), json.dumps({"job_id": job_id, "workdir": state["workdir"]}), 0o644)
    print(run)


def metric_of(run: str, metric: str) -> float | None:
    """The trial's last value of ``metric``: its chief's ``metric`` events, else its ``epoch`` events."""
    slurm = os.path.join(run, "slurm")
    restarts = sorted(int(n[1:]) for n in os.listdir(slurm) if n[:1] == "r" and n[1:].isdigit())
    by_metric, by_epoch = None, None
    for restart in restarts:
        try:
            with open(os.path.join(slurm, f"r{restart}", "task-0.log"), errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            start = line.find(EVENT_PREFIX)
            if start < 0:
                continue
            try:
                event = json.loads(line[start:])
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("event") == "metric" and event.get("name") == metric:
                by_metric = number(event.get("value"), by_metric)
            elif event.get("event") == "epoch" and metric in event:
                by_epoch = number(event.get(metric), by_epoch)
    return by_metric if by_metric is not None else by_epoch


def number(value: Any, otherwise: float | None) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else otherwise


def tell(sweep_dir: str, run: str, exit_status: int, stopped: bool = False) -> None:
    from optuna.trial import TrialState

    state = load(os.path.join(sweep_dir, "sweep.json"))
    slurm = os.path.join(run, "slurm")
    restarts = sorted(int(n[1:]) for n in os.listdir(slurm) if n[:1] == "r" and n[1:].isdigit())
    if restarts and os.path.exists(os.path.join(slurm, f"r{restarts[-1]}", "requeued")):
        return  # Slurm runs the task again: the trial is not over
    if os.path.exists(os.path.join(sweep_dir, "slurm", "cancel-requested")):
        return  # the sweep was cancelled: its running trials run again on resume
    study = study_of(sweep_dir, state, create=False)
    trial_number = int(os.path.basename(run.rstrip("/")).split("-")[-1])
    trial_id = study._storage.get_trial_id_from_study_id_trial_number(study._study_id, trial_number)
    if study._storage.get_trial(trial_id).state is not TrialState.RUNNING:
        return
    value = metric_of(run, state["metric"])
    if os.path.exists(os.path.join(slurm, "cancel-requested")):
        message = "cancelled"
    elif stopped:
        return  # Slurm stopped the task (scancel, a preemption): interrupted, not failed; resume runs it again
    elif exit_status != 0:
        message = f"exit status {exit_status}"
    elif value is None:
        message = f"the trial reported no {state['metric']!r}"
    else:
        study.tell(trial_number, value)
        return
    study._storage.set_trial_user_attr(trial_id, "message", message)
    study.tell(trial_number, state=TrialState.FAIL)
    limit = state.get("max_failed_trials")
    failed = sum(1 for t in study.get_trials(deepcopy=False) if t.state is TrialState.FAIL)
    if limit is not None and failed >= limit:
        array = os.environ.get("SLURM_ARRAY_JOB_ID")
        if array:  # start no more trials: the pending tasks go, the running ones finish
            subprocess.run(["scancel", "--state=PENDING", array], check=False)


def main(argv: list[str]) -> None:
    if argv[1] == "ask":
        ask(argv[2], argv[3] if len(argv) > 3 else "")
    elif argv[1] == "tell":
        tell(argv[2], argv[3], int(argv[4]), stopped=len(argv) > 5 and argv[5] != "")
    else:
        raise SystemExit(f"cloudtrain sweep_trial: unknown command {argv[1]!r}")


if __name__ == "__main__":
    main(sys.argv)
