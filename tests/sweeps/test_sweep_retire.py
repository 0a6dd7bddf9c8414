"""Before an interrupted trial runs again, its old run is stopped and its folder set aside
(:func:`cloudtrain.app.sweeps.local.retire`); the end-to-end case is tests/sweeps/test_sweep_killed.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cloudtrain.app.sweeps.local import retire
from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.errors import UsageError


@dataclass
class _Run:
    state: JobState
    killed: int = 0

    def status(self) -> JobStatus:
        return JobStatus("score-t001", "score-t001", self.state, self.state.value)

    def kill(self) -> JobStatus:
        self.killed += 1
        self.state = JobState.CANCELLED
        return self.status()


@dataclass
class _Backend:
    runs: dict[str, _Run] = field(default_factory=dict)

    def attach(self, job_id: str, **_: object) -> _Run:
        if job_id not in self.runs:
            raise UsageError(f"no local run {job_id!r}")
        return self.runs[job_id]


def _trial_folder(root: Path, name: str = "trial-001") -> Path:
    folder = root / name
    (folder / "local-run").mkdir(parents=True)
    (folder / "local-run" / "status.json").write_text('{"state": "RUNNING"}')
    return folder


def test_a_running_old_run_is_killed_and_its_folder_kept_beside(tmp_path: Path) -> None:
    run = _Run(JobState.RUNNING)
    folder = _trial_folder(tmp_path)
    aside = retire(_Backend({"score-t001": run}), {"job_id": "score-t001", "output_dir": str(folder)})  # type: ignore[arg-type]
    assert run.killed == 1
    assert aside == tmp_path / "trial-001.interrupted"
    assert (aside / "local-run" / "status.json").read_text() == '{"state": "RUNNING"}'
    assert not folder.exists()  # the rerun's folder is free


def test_an_ended_old_run_is_not_killed_and_later_kills_number_their_folders(tmp_path: Path) -> None:
    run = _Run(JobState.FAILED)
    backend = _Backend({"score-t001": run})
    attrs = {"job_id": "score-t001", "output_dir": str(tmp_path / "trial-001")}
    _trial_folder(tmp_path)
    assert retire(backend, attrs) == tmp_path / "trial-001.interrupted"  # type: ignore[arg-type]
    _trial_folder(tmp_path)
    assert retire(backend, attrs) == tmp_path / "trial-001.interrupted-2"  # type: ignore[arg-type]
    _trial_folder(tmp_path)
    assert retire(backend, attrs) == tmp_path / "trial-001.interrupted-3"  # type: ignore[arg-type]
    assert run.killed == 0


def test_a_run_without_a_record_or_a_folder_leaves_nothing_to_do(tmp_path: Path) -> None:
    folder = _trial_folder(tmp_path, "trial-004")
    # killed before the submit recorded the run: nothing to stop, the folder is still set aside
    assert retire(_Backend(), {"job_id": "score-t004", "output_dir": str(folder)}) == tmp_path / "trial-004.interrupted"  # type: ignore[arg-type]
    # killed before the trial's folder was made
    assert retire(_Backend(), {"job_id": "score-t005", "output_dir": str(tmp_path / "trial-005")}) is None  # type: ignore[arg-type]
    assert retire(_Backend(), {}) is None  # type: ignore[arg-type]
