"""A local run is found wherever its project now lives: by its id from inside the project (its
``cloudtrain-runs/<id>``), by the folder history recorded, by the folder given; after the project was
moved or renamed, ``status``, ``logs``, ``report`` and ``cancel`` of its runs keep working from inside it.
Two runs never share one run record: a second run into the same ``output_dir`` is refused in one line
and the first run's record survives."""

from __future__ import annotations

import importlib
import json
import os
import shutil
from pathlib import Path

import pytest

from cloudtrain import history
from cloudtrain.backends import get_backend
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.local.find import find_run
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from tests.backends.local.conftest import JOB_NAME, bare_image, make_spec

ECHO_LINES = Path(__file__).resolve().parents[2] / "packages" / "echo_lines"
CONFIG = """\
name: moved
backend: local
region: us-central1
project: my-project
machine: {type: n1-standard-4}
package: {path: echo_lines, module: echo_lines.task}
"""


@pytest.fixture
def project(tmp_path, monkeypatch, shared_cache):
    """A project folder (``before/my-project``) with tests/packages/echo_lines and a config; the local backend
    on the bare image (no TensorFlow)."""
    root = tmp_path / "before" / "my-project"
    root.mkdir(parents=True)
    shutil.copytree(ECHO_LINES, root / "echo_lines")
    (root / "job.yaml").write_text(CONFIG)
    local = LocalBackend(
        cache_root=shared_cache, gpu_count=lambda: 0, image_for=lambda spec: bare_image(), log=lambda m: None
    )
    monkeypatch.setattr(importlib.import_module("cloudtrain.backends.local.backend"), "BACKEND", local)
    monkeypatch.chdir(root)
    return root


def submit(*args: str, extra: tuple[str, ...] = ()) -> str:
    """A run of echo_lines with these args; its id (the newest in history)."""
    assert main(["submit", "--config", "job.yaml", "--set", f"args={json.dumps(list(args))}", *extra]) == ExitCode.OK
    return history.recent(1)[0].job_id


def status(job: str, capsys) -> dict:
    capsys.readouterr()
    code = main(["status", job, "-o", "json"])
    out = capsys.readouterr().out
    assert code == ExitCode.OK, out
    return json.loads(out)


@pytest.mark.slow
def test_a_moved_project_keeps_status_logs_report_and_cancel_of_its_runs(project, tmp_path, monkeypatch, capsys):
    job = submit("--line", "first of the run")
    recorded = history.find(job)
    assert recorded is not None and recorded.name == str(project / "cloudtrain-runs" / job)
    monkeypatch.chdir(tmp_path)
    assert status(job, capsys)["state"] == "SUCCEEDED"  # by the folder history recorded, from anywhere

    moved = tmp_path / "after" / "renamed-project"
    moved.parent.mkdir()
    os.rename(project, moved)
    assert not Path(recorded.name).exists()
    assert main(["status", job]) == ExitCode.BAD_INPUT  # outside it, before any command found it: one line
    err = capsys.readouterr().err
    assert f"local run {job} was recorded in {recorded.name}, which is gone" in err
    assert f"NEW_PLACE/{job}" in err and len(err.strip().splitlines()) <= 2
    assert main(["outputs", job]) == ExitCode.BAD_INPUT  # the hint fits every command that takes the id
    err = capsys.readouterr().err
    assert "instead of the id" in err and "cloudtrain status" not in err
    for here in (moved, moved / "echo_lines"):  # the project's folder, or a folder inside it
        monkeypatch.chdir(here)
        assert status(job, capsys)["state"] == "SUCCEEDED"
        assert main(["logs", job]) == ExitCode.OK
        assert "first of the run" in capsys.readouterr().out
        assert main(["cancel", job]) == ExitCode.OK  # a finished run: cancel says how it ended
        assert capsys.readouterr().out.strip() == f"Job {job}: SUCCEEDED"
    monkeypatch.chdir(moved)
    assert main(["report", job, "--out", "report"]) == ExitCode.OK
    assert (moved / "report" / "report.html").is_file()

    moved_run = moved / "cloudtrain-runs" / job
    capsys.readouterr()
    assert main(["list", "-o", "json"]) == ExitCode.OK  # list names the run where it is now
    assert json.loads(capsys.readouterr().out)[0]["name"] == str(moved_run)
    shown = status(job, capsys)["details"]  # every path it shows is where the files are now
    for key in ("model_dir", "checkpoint_dir", "tensorboard_dir", "output_dir", "logs_dir"):
        assert shown[key].startswith(str(moved_run)), (key, shown[key])
    assert Path(shown["logs_dir"]).is_dir()
    files = get_backend("local").attach(job).files()
    assert files.tensorboard is not None and str(files.tensorboard.local_path).startswith(str(moved_run))

    monkeypatch.chdir(tmp_path)  # outside the moved project: history learnt its new place when it was found
    assert (found := history.find(job)) is not None and found.name == str(moved_run)
    assert status(str(moved_run), capsys)["state"] == "SUCCEEDED"
    assert status(job, capsys)["details"]["output_dir"] == str(moved_run)
    capsys.readouterr()
    assert main(["list", "-o", "json"]) == ExitCode.OK  # once, in its new place
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == [str(moved_run)]

    monkeypatch.chdir(moved)  # a later run in the new place: history now tells where the project is
    later = submit("--line", "second")
    monkeypatch.chdir(tmp_path)
    assert status(later, capsys)["state"] == "SUCCEEDED"
    assert status(job, capsys)["details"]["output_dir"] == str(moved_run)


@pytest.mark.slow
def test_a_run_is_found_by_its_id_inside_its_project_without_history(project, tmp_path, monkeypatch, capsys):
    job = submit("--line", "holding", "--hold", extra=("--detach",))
    history.history_file().unlink()  # another machine's history, or none
    monkeypatch.chdir(project / "echo_lines")
    run = get_backend("local").attach(job)  # by its id alone
    assert next(line.message for line in run.logs(follow=True) if line.replica == "chief") == "holding"
    assert status(job, capsys)["state"] == "RUNNING"
    assert main(["cancel", job]) == ExitCode.OK
    assert status(job, capsys)["state"] == "CANCELLED"
    assert main(["logs", job]) == ExitCode.OK and "holding" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)  # outside the project, with no history: not found, in one line
    assert main(["status", job]) == ExitCode.BAD_INPUT
    assert f"job {job!r} is not in this machine's history" in capsys.readouterr().err


@pytest.mark.slow
def test_a_second_run_into_the_same_output_dir_is_refused_and_the_first_record_survives(project, capsys):
    first = submit("--line", "the first run", extra=("--set", "output_dir=out/exp"))
    record = project / "out" / "exp" / "local-run" / "status.json"
    before = record.read_text()
    capsys.readouterr()
    code = main(["submit", "--config", "job.yaml", "--set", "output_dir=out/exp", "--set", "args=[--line, second]"])
    err = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT
    assert f"output_dir {project / 'out' / 'exp'} already holds the record of run {first}" in err
    assert len([line for line in err.splitlines() if line.startswith("error")]) == 1
    assert record.read_text() == before
    assert [e.job_id for e in history.recent(5)] == [first]  # no record of a run that never started
    assert status(first, capsys)["state"] == "SUCCEEDED"
    assert main(["logs", first]) == ExitCode.OK and "the first run" in capsys.readouterr().out
    second = submit("--line", "second", extra=("--set", "output_dir=out/exp2"))  # another folder: its own record
    assert status(second, capsys)["details"]["output_dir"] == str(project / "out" / "exp2")


def test_a_run_that_never_started_leaves_its_output_dir_free(tmp_path, monkeypatch, fake_package, shared_cache):
    monkeypatch.chdir(tmp_path)
    spec = make_spec(tmp_path, output_dir=str(tmp_path / "named"))

    def no_image(spec):
        raise OSError("no interpreter")

    with pytest.raises(OSError):
        LocalBackend(cache_root=shared_cache, image_for=no_image).submit(spec, fake_package)
    assert not (tmp_path / "named" / "local-run").exists()  # the next submit into it is not refused
    chosen = make_spec(tmp_path, output_dir=f"cloudtrain-runs/{JOB_NAME}")  # the folder cloudtrain chose goes too
    with pytest.raises(OSError):
        LocalBackend(cache_root=shared_cache, image_for=no_image).submit(chosen, fake_package)
    assert not Path(chosen.output_dir).exists()


def run_folder(root: Path, name: str, recorded: str | None) -> Path:
    folder = root / name
    (folder / "local-run").mkdir(parents=True)
    data = {"job_id": Path(name).name, "native_state": "succeeded", **({"name": recorded} if recorded else {})}
    (folder / "local-run" / "status.json").write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize("old", ["/gone/a/proj", "/gone/b/other-name"])
def test_a_recorded_folder_is_found_again_under_the_project_it_moved_with(tmp_path, old):
    new = tmp_path / "now" / "proj"
    named = run_folder(new, "out/exp1", f"{old}/out/exp1")  # an output_dir the user named
    chosen = run_folder(new, "cloudtrain-runs/job-1", f"{old}/cloudtrain-runs/job-1")
    for cwd in (new, new / "out", new / "out" / "exp1"):
        assert find_run(f"{old}/out/exp1", cwd=str(cwd)) == named
        assert find_run(f"{old}/cloudtrain-runs/job-1", cwd=str(cwd)) == chosen
    assert find_run(f"{old}/out/exp1", cwd=str(tmp_path)) is None  # not from outside the project
    assert find_run("job-1", cwd=str(new / "out")) == chosen  # by id, from inside the project
    assert find_run("out/exp1", cwd=str(new)) == named  # by the folder given
    assert find_run(str(named), cwd=str(tmp_path)) == named


def test_a_folder_in_the_same_place_that_holds_another_run_is_not_taken(tmp_path):
    new = tmp_path / "proj"
    run_folder(new, "out/exp1", "/gone/elsewhere/out/exp1")  # the same tail, another run
    assert find_run("/gone/proj/out/exp1", cwd=str(new)) is None
    damaged = new / "cloudtrain-runs" / "job-2"
    (damaged / "local-run").mkdir(parents=True)
    (damaged / "local-run" / "status.json").write_text("{trunc")
    assert find_run("/gone/proj/cloudtrain-runs/job-2", cwd=str(new)) is None  # no evidence it is that run
    assert find_run("job-2", cwd=str(new)) == damaged  # by id it is: status then says what is damaged
    unnamed = run_folder(new, "cloudtrain-runs/job-3", None)
    assert find_run("/gone/proj/cloudtrain-runs/job-3", cwd=str(new)) == unnamed  # its id is the folder's name


def test_list_and_lookups_in_a_folder_that_was_removed(tmp_path, monkeypatch, capsys):
    """A shell left in a removed folder: list still lists (places relative to ~), a run is found by its folder."""
    run = run_folder(tmp_path / "proj", "cloudtrain-runs/job-1", None)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert find_run(str(run)) == run and find_run("job-1") is None
    history.record(history.JobRecord("job-1", str(run), "local", "local", state="SUCCEEDED"))
    assert main(["list", "-o", "json"]) == ExitCode.OK
    assert [j["job_id"] for j in json.loads(capsys.readouterr().out)] == ["job-1"]


def test_the_run_folders_are_named_once_low_enough_for_the_light_readers():
    """record.py and app/listing.py load no spec (list stays light): the one name is history's, which they and
    the backend read; no other module spells it."""
    from cloudtrain import history
    from cloudtrain.backends.local import record
    from cloudtrain.backends.local.job import RUNS_DIR

    assert record.RUNS_DIR == RUNS_DIR == history.RUNS_DIR == "cloudtrain-runs"
    package = Path(history.__file__).parent
    spelled = [p.relative_to(package).as_posix() for p in package.rglob("*.py") if '"cloudtrain-runs"' in p.read_text()]
    assert spelled == ["history.py"]


@pytest.mark.slow
def test_outputs_list_what_a_run_made_not_its_data_links_nor_after_a_move(project, tmp_path, monkeypatch, capsys):
    """A data channel is a link in the run folder (``local-run/data/train``): an input, not an output;
    ``outputs`` of the run neither lists it nor warns about it, where it ran or after the project moved
    (when the link leads nowhere)."""
    (project / "data").mkdir()
    (project / "data" / "points.csv").write_text("x,y\n1,2\n")
    with (project / "job.yaml").open("a") as config:
        config.write("data: {train: ./data}\n")
    job = submit("--line", "with data")
    moved = tmp_path / "after" / "proj"
    for here in (project, moved):
        if here == moved:
            moved.parent.mkdir()
            os.rename(project, moved)
        monkeypatch.chdir(here)
        capsys.readouterr()
        assert main(["outputs", job]) == ExitCode.OK
        out, err = capsys.readouterr()
        assert "warning" not in err and "data/train" not in out + err, err
        assert "local-run/chief.log" in out
