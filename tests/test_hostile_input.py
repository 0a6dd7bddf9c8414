"""Hostile and careless input, held: each case is refused in one line (exit 2, no traceback) before
anything is uploaded or read outside the data folder (issue 27). One table: a case writes its
files and returns the command line; the refusal must name what it refused."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from cloudtrain.cli import main

SAGEMAKER = """\
name: demo
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket/team
machine: {type: ml.m5.xlarge}
package: {path: trainer}
"""
VERTEX = """\
name: demo
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-4}
package: {path: trainer, module: trainer.task}
"""
BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _config(tmp: Path, text: str | bytes, name: str = "job.yaml") -> Path:
    path = tmp / name
    path.write_bytes(text if isinstance(text, bytes) else textwrap.dedent(text).encode())
    return path


def validate(text: str | bytes) -> Callable[[Path], list[str]]:
    return lambda tmp: ["validate", str(_config(tmp, text))]


def dry_run(
    data: str, *, base: str = SAGEMAKER, local: bool = False, files: Callable[[Path], None] = lambda d: None
) -> Callable[[Path], list[str]]:
    """A dry run of a config whose ``data:`` is ``data``; ``files`` fills the folder ``digits``."""

    def setup(tmp: Path) -> list[str]:
        folder = tmp / "digits"
        folder.mkdir(exist_ok=True)
        (folder / "a.npz").write_bytes(b"A" * 100)
        files(folder)
        path = _config(tmp, base + f"data:\n  train: {data}\n")
        return ["submit", "-c", str(path), "--dry-run", *(["--local"] if local else [])]

    return setup


def _link(name: str, target: str | Callable[[Path], str]) -> Callable[[Path], None]:
    return lambda folder: os.symlink(target(folder) if callable(target) else target, folder / name)


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "pipe")


def _newline_name(folder: Path) -> None:
    (folder / "two\nlines.npz").write_bytes(b"x")


def _outside_file(folder: Path) -> str:
    secret = folder.parent / "secret.txt"
    secret.write_text("key")
    return str(secret)


def _relative_link_out(folder: Path) -> None:
    _outside_file(folder)
    os.symlink("../secret.txt", folder / "s")


def _fifo_config(tmp: Path) -> list[str]:
    os.mkfifo(tmp / "pipe.yaml")
    return ["validate", str(tmp / "pipe.yaml")]


HOSTILE = {
    # the loader: refused while reading, in one line with the line where there is one
    "larger than 1 MiB": (validate(SAGEMAKER + "#" + "x" * 2**20 + "\n"), "larger than 1 MiB"),
    "billion laughs": (validate(BILLION_LAUGHS), "job.yaml:5: YAML aliases expand the config past 10,000 values"),
    "billion laughs under an unused key": (
        validate(SAGEMAKER + "unused:\n" + textwrap.indent(BILLION_LAUGHS, "  ")),
        "job.yaml:13: YAML aliases expand",
    ),
    "10,001 arguments": (
        validate(SAGEMAKER + "args: [" + ",".join(["a"] * 10_001) + "]\n"),
        "job.yaml:8: the config holds more than 10,000 values",
    ),
    "recursive alias": (
        validate(SAGEMAKER + "args: &a [x, *a]\n"),
        "job.yaml:8: the alias *a refers to the collection",
    ),
    "nesting 101 deep": (validate("args: " + "[" * 101 + "]" * 101 + "\n"), "job.yaml:1: nested deeper than 100"),
    "nesting 500 000 deep": (validate("x: " + "[" * 500_000 + "]" * 500_000), "nested deeper than 100"),
    "/dev/zero": (lambda tmp: ["validate", "/dev/zero"], "/dev/zero: the config is not a regular file"),
    "/dev/urandom": (lambda tmp: ["validate", "/dev/urandom"], "/dev/urandom: the config is not a regular file"),
    "a FIFO as the config": (_fifo_config, "pipe.yaml: the config is not a regular file"),
    "not UTF-8": (validate(b"name: demo\nregion: us-\xff\n"), "job.yaml:2: not UTF-8: byte 22 (0xff)"),
    # data folders: nothing outside the folder is read, nothing the cloud cannot store is sent
    "absolute link out": (
        dry_run("digits", files=_link("host", "/etc/passwd")),
        "host is a link to /etc/passwd, outside the folder",
    ),
    "absolute link to a file beside the folder": (
        dry_run("digits", files=_link("s", _outside_file)),
        "/secret.txt, outside the folder",
    ),
    "../ link out": (
        dry_run("digits", files=_relative_link_out),
        "/secret.txt, outside the folder",
    ),
    "/proc/self/environ": (dry_run("digits", files=_link("env", "/proc/self/environ")), "env is a link to /proc/"),
    "folder link out": (dry_run("digits", files=_link("etc", "/etc")), "etc is a link to /etc, outside the folder"),
    "dangling link": (
        dry_run("digits", files=_link("gone", "nowhere.npz")),
        "gone is a link to nowhere.npz, which does not exist",
    ),
    "link loop": (dry_run("digits", files=_link("again", lambda d: str(d))), "a folder it is inside (a loop)"),
    "FIFO in the data": (dry_run("digits", files=_fifo), "pipe is not a regular file"),
    "newline in a name": (dry_run("digits", files=_newline_name), "has a line break in its name"),
    "empty path": (dry_run("''"), "train: received ''; an empty path would be the config's own folder"),
    "empty path, --local": (dry_run("''", local=True), "an empty path would be the config's own folder"),
    "climbing path": (dry_run("../../../etc"), "may not climb above it"),
    "climbing path, --local": (dry_run("../digits", local=True), "may not climb above it"),
    "/proc": (dry_run("/proc"), "/proc is a system folder"),
    "/sys": (dry_run("/sys/kernel"), "/sys/kernel is a system folder"),
    "/dev": (dry_run("/dev", local=True), "/dev is a system folder"),
    "/etc": (dry_run("/etc"), "/etc is a system folder"),
    "/": (dry_run("/"), "/ is a system folder"),
    "s3 ..": (dry_run("s3://b/data/../../etc/passwd"), "a bucket path has no parent folders"),
    "gs ..": (dry_run("gs://b/data/../x", base=VERTEX), "a bucket path has no parent folders"),
    "staging ..": (
        lambda tmp: ["validate", str(_config(tmp, SAGEMAKER.replace("s3://my-bucket/team", "s3://my-bucket/../x")))],
        "staging_bucket: received 's3://my-bucket/../x'; a bucket path has no parent folders",
    ),
}


@pytest.mark.timeout(60)  # a hang guard: a case that blocks (a FIFO, /dev/urandom) fails instead of hanging CI
@pytest.mark.parametrize("setup, expected", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_one_line_exit_2(setup, expected, project, tmp_path, capsys):
    project()  # the trainer package beside the configs
    code = main(setup(tmp_path))
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert expected in lines[0]
    assert "Traceback" not in err and out == ""


# --- Round 2 (issue 41): numbers, keys as written, --set forms, reserved labels, names the file system gives ---

SWEEP = """\
name: demo
backend: local
target: vertex
region: us-central1
machine: {type: n1-standard-4}
package: {path: trainer, module: trainer.task}
sweep:
  metric: acc
  max_trials: 2
  params:
"""


def _with_set(text: str, *sets: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        return ["validate", str(_config(tmp, text)), *[a for s in sets for a in ("--set", s)]]

    return setup


def _not_utf8_name(folder: Path) -> None:
    (Path(os.fsdecode(bytes(folder))) / os.fsdecode(b"caf\xe9.npz")).write_bytes(b"x")


ROUND_2 = {
    # numbers: finite and bounded, refused where the config says them
    "max_usd .inf": (
        validate(SAGEMAKER + "budget: {max_usd: .inf}\n"),
        "job.yaml:8: budget.max_usd: received inf; a number here must be finite",
    ),
    "max_usd 1e308": (
        validate(SAGEMAKER + "budget: {max_usd: 1e308}\n"),
        "budget.max_usd: received 1e+308; input should be less than or equal to 10000000",
    ),
    "max_hours .inf": (validate(SAGEMAKER + "budget: {max_hours: .inf}\n"), "budget.max_hours: received inf"),
    "sweep min .nan": (
        validate(SWEEP + "    lr: {min: .nan, max: 0.1}\n"),
        "job.yaml:11: sweep.params.lr.min: received nan; a number here must be finite",
    ),
    "sweep max .inf": (validate(SWEEP + "    lr: {min: 0.1, max: .inf}\n"), "sweep.params.lr.max: received inf"),
    "sweep value -.inf": (validate(SWEEP + "    lr: {values: [0.1, -.inf]}\n"), "sweep.params.lr.values[1]"),
    # long input: the line names it, cut, and says how long it was
    "100,000-character name": (
        validate(SAGEMAKER.replace("name: demo", "name: " + "n" * 100_000)),
        "[100,003 characters]",
    ),
    # every --set form: one line that names --set
    "--set a..b=1": (_with_set(SAGEMAKER, "a..b=1"), "--set: the key 'a..b' has an empty part"),
    "--set .x=1": (_with_set(SAGEMAKER, ".x=1"), "--set: the key '.x' has an empty part"),
    "--set unknown.key=1": (_with_set(SAGEMAKER, "unknown.key=1"), "--set: unknown: unknown key 'unknown'"),
    "--set of 200 parts": (_with_set(SAGEMAKER, ".".join(["k"] * 200) + "=1"), "has 200 parts"),
    # paths and names
    "/proc/1/root/etc": (dry_run("/proc/1/root/etc"), "/proc/1/root/etc is a system folder"),
    "a data name that is not UTF-8": (
        dry_run("digits", files=_not_utf8_name),
        "has a name that is not UTF-8 (byte 0xe9)",
    ),
    # bucket keys are literal: never rewritten, `//` and `/./` refused as the typos they are
    "s3 //": (dry_run("s3://b//data//x/"), "received 's3://b//data//x/'; `//` in a bucket path"),
    "gs /./": (dry_run("gs://b/data/./x/", base=VERTEX), "`/./` in a bucket path"),
    "staging //": (
        validate(SAGEMAKER.replace("s3://my-bucket/team", "s3://my-bucket//team")),
        "write 's3://my-bucket/team' if that is what you meant",
    ),
    # cloudtrain's own labels
    "reserved label": (
        validate(SAGEMAKER + "labels: {cloudtrain-submit-id: mine}\n"),
        "labels.cloudtrain-submit-id: 'cloudtrain-submit-id' is one of cloudtrain's own labels",
    ),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("setup, expected", ROUND_2.values(), ids=ROUND_2.keys())
def test_round_2_input_is_one_short_line_exit_2(setup, expected, project, tmp_path, capsys):
    project()
    code = main(setup(tmp_path))
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, err[:2000]
    assert len(lines) == 1 and lines[0].startswith("error: "), err[:2000]
    assert expected in lines[0]
    assert len(lines[0]) < 1000  # a long input is cut, never echoed whole
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("case", ["max_usd .inf", "--set a..b=1", "reserved label"])
def test_debug_adds_the_traceback_and_keeps_the_exit_code(case, project, tmp_path, capsys):
    """docs/reference/exit-codes.md: --debug only adds the traceback; bad input is exit 2 with it too."""
    project()
    setup, expected = ROUND_2[case]
    code = main(["--debug", *setup(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1].startswith("error: ") and expected in err.strip().splitlines()[-1]


def test_a_str_tag_is_text_and_hyperparameters_keep_the_text_written(project, tmp_path, capsys):
    """``!!str 12`` is YAML's "this is text"; ``1.10`` reaches the job as 1.10, not 1.1; a float that
    YAML cannot hold as written is one warning."""
    project()
    path = _config(
        tmp_path,
        VERTEX
        + "env: {X: !!str 12, Y: !!str 1.10}\n"
        + "hyperparameters: {version: 1.10, lr: 1e-3, layers: 010, drop: 0.50, name: x}\n"
        + "budget: {max_usd: 2.00000000000000000001}\n",
    )
    code = main(["submit", "-c", str(path), "--dry-run", "-o", "json", "--set", "hyperparameters.wd=2.50"])
    out, err = capsys.readouterr()
    assert code == 0, err
    request = out[out.index("{") :]
    assert "--version=1.10" in request and "--lr=1e-3" in request and "--layers=010" in request
    assert "--drop=0.50" in request and "--wd=2.50" in request and "--name=x" in request
    assert '"name": "X",\n' in request and '"value": "12"' in request and '"value": "1.10"' in request
    assert err.strip().splitlines() == [
        f"warning: {path}:10: budget.max_usd: YAML reads 2.00000000000000000001 as the number 2.0 "
        "(a float holds about 17 digits); 2.0 is used"
    ]


def test_the_api_loads_what_submit_local_takes(project, tmp_path, monkeypatch):
    """A ``shell:`` secret: ``submit --local`` takes it; so does ``load_config``, for ``submit(local=True)``;
    a cloud plan still refuses it, in the cloud's words."""
    import cloudtrain
    from cloudtrain.errors import ConfigError

    project()
    monkeypatch.setenv("MY_TOKEN", "t0k3n")
    path = _config(tmp_path, VERTEX + "secrets: {TOKEN: shell:MY_TOKEN}\n")
    config = cloudtrain.load_config(path)
    assert cloudtrain.plan(config, local=True).spec.backend == "local"
    with pytest.raises(ConfigError, match="shell:MY_TOKEN is read from this shell, which a vertex job cannot see"):
        cloudtrain.plan(config)


# --- Round 2: cloudtrain's own state files: what is not a regular file is refused unread, nothing written through ---

RUN_STATUS = {
    "job_id": "demo-1",
    "name": "cloudtrain-runs/demo-1",
    "state": "SUCCEEDED",
    "native_state": "succeeded",
    "created": "2025-01-01T00:00:00+00:00",
    "details": {"replicas": ["chief"], "exit_code": 0},
}


@pytest.fixture
def recorded_run(tmp_path, monkeypatch):
    """A finished local run ``demo-1`` in ./cloudtrain-runs, recorded in history; returns its local-run folder."""
    import json

    from cloudtrain import history, statefiles

    statefiles._warned.clear()  # each main() here stands for a new process
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "cloudtrain-runs" / "demo-1" / "local-run"
    folder.mkdir(parents=True)
    (folder / "status.json").write_text(json.dumps(RUN_STATUS))
    (folder / "chief.log").write_text("epoch 1\nepoch 2 from chief.log\n")
    history.record(history.JobRecord("demo-1", str(folder.parent), "local", "local"))
    return folder


def _replace(name: str, how: str) -> Callable[[Path], None]:
    """Put a FIFO, a link to /dev/zero, or a link to a file outside the run, where ``name`` was."""

    def setup(folder: Path) -> None:
        from cloudtrain import history

        path = history.history_file() if name == "history" else folder / name
        sound = path.read_bytes() if path.is_file() else b"{}"
        path.unlink(missing_ok=True)
        if how == "fifo":
            os.mkfifo(path)
        elif how == "empty":
            path.write_bytes(b"")
        elif how == "/dev/zero":
            os.symlink("/dev/zero", path)
        else:  # a sound copy outside the run folder
            outside = folder.parents[2] / f"outside-{name}"
            outside.write_bytes(sound)
            os.symlink(outside, path)

    return setup


# (what replaces a file, the command, its exit code, what stderr must say, what stdout must hold)
STATE = {
    "status.json a FIFO: status": (
        _replace("status.json", "fifo"),
        ["status", "demo-1"],
        2,
        "status.json: is a FIFO, not a regular file",
        "",
    ),
    "status.json a FIFO: list": (
        _replace("status.json", "fifo"),
        ["list"],
        0,
        "status.json: is a FIFO, not a regular file",
        "UNKNOWN",
    ),
    "status.json a link to /dev/zero: status": (
        _replace("status.json", "/dev/zero"),
        ["status", "demo-1"],
        2,
        "status.json: is a link to /dev/zero, outside ",
        "",
    ),
    "status.json a link out of the run folder": (
        _replace("status.json", "outside"),
        ["status", "demo-1"],
        2,
        "outside-status.json, outside ",
        "",
    ),
    "lines.jsonl a FIFO: logs": (
        _replace("lines.jsonl", "fifo"),
        ["logs", "demo-1"],
        0,
        "lines.jsonl: is a FIFO, not a regular file",
        "epoch 2 from chief.log",
    ),
    "lines.jsonl a link to /dev/zero: logs": (
        _replace("lines.jsonl", "/dev/zero"),
        ["logs", "demo-1"],
        0,
        "lines.jsonl: is a link to /dev/zero, outside ",
        "epoch 2 from chief.log",
    ),
    "lines.jsonl emptied, chief.log intact: logs": (
        _replace("lines.jsonl", "empty"),
        ["logs", "demo-1"],
        0,
        "lines.jsonl: holds no lines",
        "epoch 2 from chief.log",
    ),
    "chief.log a link out of the run folder: logs": (
        _replace("chief.log", "outside"),
        ["logs", "demo-1"],
        0,
        "chief.log: is a link to",
        "",
    ),
    "history a FIFO: list": (_replace("history", "fifo"), ["list"], 0, "jobs.jsonl: is a FIFO", ""),
    "history a FIFO: status": (
        _replace("history", "fifo"),
        ["status", "demo-1"],
        2,  # the job is not found in a history that cannot be read: pass --backend and --region
        "jobs.jsonl: is a FIFO, not a regular file; its records are ignored",
        "",
    ),
    "history a link to /dev/zero: list": (
        _replace("history", "/dev/zero"),
        ["list"],
        0,
        "jobs.jsonl: is a device (a link to /dev/zero), not a regular file",
        "",
    ),
}


@pytest.mark.timeout(30)  # today's hang: a FIFO read waits for a writer, /dev/zero never ends
@pytest.mark.parametrize("damage, command, code, said, shown", STATE.values(), ids=STATE.keys())
def test_a_state_file_that_is_not_a_regular_file_is_refused_unread(
    damage, command, code, said, shown, recorded_run, capsys
):
    damage(recorded_run)
    assert main(command) == code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if said in line]) == 1, err
    assert shown in out
    if code == 2:
        assert err.strip().splitlines()[-1].startswith("error: ")
