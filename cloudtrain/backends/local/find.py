"""Where a local run's folder is now, whatever its project was called, or where it lived, when it ran.

History records a run by its output folder's absolute path; a moved project leaves that path behind, but from
inside the project the run is found again by the same tail of its path, only when its ``status.json`` names that
path or id. :func:`listed` is what ``list`` shows of a run found so."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cloudtrain.backends.local import record
from cloudtrain.backends.local.record import RUN_DIR, RUNS_DIR, STATUS
from cloudtrain.statefiles import Damage, load_json_object


def find_run(text: str, cwd: str | None = None, *, elsewhere: Sequence[Path] = ()) -> Path | None:
    """The run folder ``text`` names, or None: the folder as given (absolute or under ``cwd``); a run id under
    ``cloudtrain-runs/`` of ``cwd`` or a folder above; a recorded folder that moved with its project, looked for
    under ``cwd`` and its parents, then under ``elsewhere`` (:func:`known_places`)."""
    if not text or "\0" in text:
        return None
    try:
        here = Path(os.path.abspath(cwd or os.getcwd()))
    except FileNotFoundError:  # the folder this shell is in was removed: only an absolute folder is found
        given = Path(text).expanduser()
        return given if given.is_absolute() and _is_run(given) else None
    given = Path(text).expanduser()
    if _is_run(here / given):
        return given if cwd is None else here / given  # as given: messages name it as the user did
    roots = [Path() if cwd is None else here, *here.parents, *elsewhere]  # this folder's finds stay relative
    if len(given.parts) == 1:  # an id: the run of that name in this project
        return next((root / RUNS_DIR / text for root in roots if _is_run(root / RUNS_DIR / text)), None)
    if not given.is_absolute():
        return None
    tails = [Path(*given.parts[-k:]) for k in range(len(given.parts) - 1, 0, -1)]  # the longest tail first
    for root in roots:
        for tail in tails:
            folder = root / tail
            if folder != given and _is_run(folder) and _recorded_as(folder, str(given)):
                return folder
    return None


def known_places(recorded: Iterable[str]) -> list[Path]:
    """Where a moved run may be now, from the run folders history recorded that are still there: each one's
    parent and grandparent (a project that moved took its older runs with it, beside its newer ones)."""
    places: dict[Path, None] = {}
    for name in recorded:
        folder = Path(name)
        if folder.is_absolute() and _is_run(folder):
            places.update(dict.fromkeys(folder.parents[:2]))
    return list(places)


def _is_run(folder: Path) -> bool:
    try:
        return (folder / RUN_DIR).is_dir()
    except OSError:  # a name too long, a folder not readable: not this run
        return False


def _recorded_as(folder: Path, path: str) -> bool:
    """Whether the run in ``folder`` is the one that ran at ``path``: its status names that folder (or, when it
    names none, its id is the folder's name). A damaged status is not evidence either way: not this run."""
    data = load_json_object(folder / RUN_DIR / STATUS)
    if isinstance(data, Damage):
        return False
    name = data.get("name")
    if isinstance(name, str) and name:
        return os.path.normpath(name) == os.path.normpath(path)
    return data.get("job_id") == Path(path).name


def listed(attach_id: str) -> dict[str, Any] | None:
    """What ``list`` shows of the run ``attach_id`` names (history's folder, found again if its project moved):
    ``state``, ``created``, ``ended``, ``metrics``, ``folder``; a damaged record is UNKNOWN with one warning;
    None when the run's folder is gone (history's own record stands)."""
    folder = find_run(attach_id)
    if folder is None:
        return None
    data = record.load(folder / RUN_DIR / STATUS)
    if isinstance(data, Damage):
        data.warn()
        return {"state": "UNKNOWN", "folder": str(folder)}
    details = data.get("details") or {}
    metrics = details.get("metrics")
    return {
        "state": record.NATIVE[record.native_state(data)],
        "created": data.get("created"),
        "ended": data.get("ended"),
        "metrics": metrics if isinstance(metrics, dict) else {},
        "folder": str(folder),
    }
