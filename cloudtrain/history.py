"""Remember submitted jobs (``<cache>/jobs.jsonl``, one locked append each, later lines superseding) so ``status JOB``
needs no flags. Reading is tolerant: a damaged line is one warning and every good record is still found."""

from __future__ import annotations

import functools
import json
import logging
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from cloudtrain import environment_vars, statefiles
from cloudtrain.backend_rules import attaches_by_name, names  # the registry alone: no backend is imported
from cloudtrain.errors import UsageError

log = logging.getLogger("cloudtrain.history")
#: Where a run here goes when its config names no output_dir (relative to the working dir); low, for the light readers.
RUNS_DIR = "cloudtrain-runs"


def run_folder(output_dir: str, job_name: str) -> tuple[Path, str | None]:
    """A run's folder here, absolute, and why ``output_dir`` is not used when it is a bucket (then :data:`RUNS_DIR`)."""
    if "://" in output_dir:
        note = f"output_dir {output_dir} is a bucket; local runs write to the local folder instead"
        return Path(os.path.abspath(os.path.join(RUNS_DIR, job_name))), note
    return Path(os.path.abspath(os.path.expanduser(output_dir))), None


def cache_dir() -> Path:
    """The cache: ``$CLOUDTRAIN_CACHE_DIR``, else ``$XDG_CACHE_HOME/cloudtrain``, else ``~/.cache/cloudtrain``."""
    if os.environ.get(environment_vars.CACHE_DIR):
        return Path(os.environ[environment_vars.CACHE_DIR]).expanduser()
    xdg = os.environ.get(environment_vars.XDG_CACHE_HOME)
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "cloudtrain"


def history_file() -> Path:
    return cache_dir() / "jobs.jsonl"


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    name: str  # full resource name / ARN
    backend: str
    region: str
    project: str | None = None
    config: str | None = None
    kind: str = "job"  # job | sweep | trial (a sweep's trial)
    created: str | None = None  # ISO time of the submit
    state: str | None = None  # the last state this machine saw (JobState value)
    experiment: str | None = None  # the config's ``experiment:`` (``list``/``report``/``tensorboard --experiment``)
    ended: str | None = None  # ISO time the job ended, once this machine saw it end
    metrics: dict[str, float] | None = None  # its final numbers ({"val_accuracy": 0.98, "loss": 0.05}), if known
    args: list[str] | None = None  # what its code was run with (args, then hyperparameters as --k=v), secrets ***

    @property
    def attach_id(self) -> str:
        """What the backend's ``attach`` takes: the full name recorded, for a backend the registry says attaches by it
        (a local run's output folder, its absolute path, so the run is found from any directory), else the job id."""
        return self.name if attaches_by_name(self.backend) else self.job_id


_FIELDS = {f.name for f in fields(JobRecord)}
_REQUIRED = ("job_id", "name", "backend", "region")
_TEXT = ("project", "config", "kind", "created", "state", "experiment", "ended")
_OBJECTS = ("metrics",)  # {name: number}


def record(entry: JobRecord, *, moved_from: str | None = None) -> None:
    """Append one record (``moved_from``: see :func:`note_moved`); an unwritable history is a warning, not an error."""
    path = history_file()
    try:
        statefiles.append_line(
            path, json.dumps({**asdict(entry), **({"moved_from": moved_from} if moved_from else {})})
        )
    except OSError as exc:
        log.warning(
            "warning: %s: cannot record job %s (%s); later commands need --backend and --region",
            path,
            entry.job_id,
            exc.strerror or exc,
        )


def records() -> list[JobRecord]:
    """Every good record, oldest first; bad lines and unknown backends are skipped with one warning."""
    lines = statefiles.read_json_lines(history_file(), check=_problem)
    return [JobRecord(**{k: v for k, v in data.items() if k in _FIELDS}) for _, data in lines]


def _problem(data: dict[str, Any]) -> str | None:
    """What is wrong with one history line, or None. The common case, a sound line, is checked first in few
    steps: ``list`` checks every line of the history (10,000 lines: bench/cli_bench.py)."""
    get = data.get
    if (
        type(get("job_id")) is str
        and type(get("name")) is str
        and type(get("region")) is str
        and get("backend") in _known(names())
        and all(type(get(k)) is str or get(k) is None for k in _TEXT)
        and (get("metrics") is None or _numbers(get("metrics")))
        and (get("args") is None or _texts(get("args")))
    ):
        return None
    missing = [k for k in _REQUIRED if not isinstance(data.get(k), str)]
    if missing:
        return f"no {', '.join(missing)}"
    not_text = [k for k in _TEXT if data.get(k) is not None and not isinstance(data[k], str)]
    if not_text:
        return f"{not_text[0]} is not text"
    not_numbers = [k for k in _OBJECTS if data.get(k) is not None and not _numbers(data[k])]
    if not_numbers:
        return f"{not_numbers[0]} is not an object of numbers"
    if data.get("args") is not None and not _texts(data["args"]):
        return "args is not a list of text"
    if data["backend"] not in names():
        return f"unknown backend {data['backend']!r}, allowed: {', '.join(names())}"
    return None


@functools.lru_cache(maxsize=1)  # the registry's names as a set, made again only when they change (a test registers)
def _known(registered: tuple[str, ...]) -> frozenset[str]:
    return frozenset(registered)


def _texts(value: object) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _numbers(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()
    )


def find(job_id: str) -> JobRecord | None:
    """The newest record whose short id or full name is ``job_id``, read backwards parsing only lines that hold it
    (milliseconds at 200,000 records); other damage is ``list``'s to report."""
    tokens = {json.dumps(job_id).encode(), json.dumps(job_id, ensure_ascii=False).encode("utf-8", "replace")}
    data = statefiles.last_json_line(
        history_file(), lambda d: job_id in (d["job_id"], d["name"]), contains=tokens, check=_problem
    )
    return None if data is None else JobRecord(**{k: v for k, v in data.items() if k in _FIELDS})


def recent(
    limit: int = 20, *, backend: str | None = None, region: str | None = None, experiment: str | None = None
) -> list[JobRecord]:
    """The newest jobs first, one record each, optionally of one backend / region / experiment: later lines fill in the
    submit line, which keeps its place; records are built only for the jobs returned (bench/cli_bench.py)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    renamed: dict[tuple[str, str], tuple[str, str]] = {}  # a moved job's name now -> its key, its first name's
    for _, data in statefiles.read_json_lines(history_file(), check=_problem):
        key = (data["backend"], data["name"])
        if isinstance(data.get("moved_from"), str):
            was = (data["backend"], data["moved_from"])
            renamed[key] = renamed.get(was, was)
        key = renamed.get(key, key)
        earlier = latest.get(key)
        if earlier is None:
            latest[key] = data
        else:  # updating keeps the submit order
            earlier.update((k, v) for k, v in data.items() if v is not None)
    jobs = []
    for data in reversed(latest.values()):
        if (
            (not backend or data["backend"] == backend)
            and (not region or data["region"] == region)
            and (not experiment or data.get("experiment") == experiment)
        ):
            jobs.append(JobRecord(**{k: v for k, v in data.items() if k in _FIELDS}))
            if len(jobs) == limit:
                break
    return jobs


#: The states after which a job changes no more (JobState.terminal's, as text: history imports no backend).
ENDED = frozenset({"SUCCEEDED", "FAILED", "CANCELLED", "PREEMPTED", "TIMED_OUT"})


def ended_record(job_id: str) -> JobRecord | None:
    """The newest record of ``job_id`` if it holds the job's end (a state in :data:`ENDED`), else None."""
    entry = find(job_id)
    return entry if entry is not None and entry.state in ENDED else None


def note_state(
    job_id: str, name: str, state: str, *, ended: str | None = None, metrics: dict[str, float] | None = None
) -> None:
    """Record the state a job was last seen in, if submitted here; at its end, also when it ended and its final numbers.
    An end once recorded stays: a later, weaker reading (a cluster that forgot the job) never replaces it."""
    entry = find(name) or find(job_id)
    if entry is None:
        return
    if entry.state in ENDED:
        state = entry.state
    update = {"state": state, "ended": ended or entry.ended, "metrics": metrics or entry.metrics}
    if any(getattr(entry, k) != v for k, v in update.items()):
        record(JobRecord(**{**asdict(entry), **update}))


def note_moved(name: str, now: str) -> None:
    """The job named ``name`` (a local run: its folder) was found at ``now``, its project moved: history names it
    there from now on (``find`` returns it so; ``list`` shows it once, in its place)."""
    entry = find(name)
    if entry is not None and entry.name == name:
        record(JobRecord(**{**asdict(entry), "name": now}), moved_from=name)


def run_file(job_id: str) -> Path:
    """Where the end of a followed run is kept: its final status, phases and price (the run report reads it)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in job_id)
    return cache_dir() / "runs" / f"{safe}.json"


def save_run(job_id: str, data: dict[str, Any]) -> None:
    """Write atomically (a reader never sees half a file); a failure to write is not the job's failure."""
    try:
        statefiles.write_atomic(run_file(job_id), json.dumps(data, indent=2, default=str))
    except OSError:
        pass


def load_run(job_id: str) -> dict[str, Any] | None:
    """What ``save_run`` kept; None when absent or damaged (it is advice: callers fall back to the job's log)."""
    data = statefiles.load_json_object(run_file(job_id))
    return None if isinstance(data, statefiles.Damage) else data


LAST = "last"  # the job id that stands for the newest job in this machine's history


def expand(text: str) -> str:
    """The job id ``text`` stands for: ``last``, the newest here; a unique prefix or suffix of one in history; else as
    is. Several matches: :class:`UsageError`; none: the lookup offers the nearest."""
    if text == LAST:
        newest = _ids()
        if not newest:
            raise UsageError("'last' names the newest job in this machine's history, and it has none")
        return newest[0]
    if len(text) < 3 or "/" in text or ":" in text or find(text) is not None:
        return text
    ids = _ids()
    matches = [i for i in ids if i.startswith(text) or i.endswith(text)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:6]) + (f" and {len(matches) - 6} more" if len(matches) > 6 else "")
        raise UsageError(f"{text!r} matches {len(matches)} jobs: {shown}", hint="give more of the id")
    return text


def nearest(text: str) -> list[str]:
    """The ids in history closest to ``text`` (a mistyped id), nearest first; at most three."""
    import difflib

    return difflib.get_close_matches(text, _ids(), n=3, cutoff=0.6)


def _ids() -> list[str]:
    """Every job id in history, the newest submit first, once each (trials left out: their sweep names them)."""
    seen: dict[str, None] = {}
    if not history_file().is_file():  # none, or one that cannot be read: the lookup before warned of it once
        return []
    for _, data in statefiles.read_json_lines(history_file(), check=_problem):
        if data.get("kind") != "trial":
            seen.setdefault(data["job_id"], None)  # a later line (its end) keeps the submit's place
    return list(reversed(seen))
