"""Hostile and careless input, held: each case is refused in one line (exit 2, no traceback) before
anything is uploaded or read outside the data folder (issue 27). One table: a case writes its
files and returns the command line; the refusal must name what it refused."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cloudtrain.cli import main
from tests.sweeps.test_sweep_damage import swept  # noqa: F401 - the fixture: a local sweep of two trials

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


# --- leaks (issue 41): a secret recognised by what it is is never shown, echoed or uploaded ----------------
# Each row: the command, the secret text that must appear nowhere in the output, a text that must, the exit
# code. Kept apart from HOSTILE (refusals only) so that tables added by other work merge cleanly.

_HF = "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"
_AZURE = "Zm9yLXRlc3RzLW9ubHktbm90LWEtcmVhbC1henVyZS1zdG9yYWdlLWFjY291bnQta2V5LTAxMjM0NTY3ODk="
_AWS_FILE = (
    "[default]\naws_access_key_id = AKIAQYLPMN5HHHFPZAM2\n"
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMPLEKY\n"
)


def _dry(extra: str, *flags: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["submit", "-c", str(_config(tmp, SAGEMAKER + extra)), "--dry-run", *flags]


def _env(name: str, value: str) -> Callable[[Path], list[str]]:
    return _dry(f"env: {{{name}: {value!r}}}\n")


def _with_file(rel: str, text: str, under: str = "trainer") -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        path = tmp / under / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    return setup


def _data_with(rel: str, text: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        _with_file("a.npz", "A" * 100, "digits")(tmp)
        _with_file(rel, text, "digits")(tmp)
        return _dry("data:\n  train: digits\n")(tmp)

    return setup


def _package_with(rel: str, text: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        _with_file(rel, text)(tmp)
        return _dry("")(tmp)

    return setup


LEAKS = {
    "env DB_PASS": (_env("DB_PASS", "plain-db-value-1"), "plain-db-value-1", '"DB_PASS": "***"', 0),
    "env MYSQL_PWD": (_env("MYSQL_PWD", "plain-mysql-value-2"), "plain-mysql-value-2", '"MYSQL_PWD": "***"', 0),
    "env Stripe live key": (_env("PAY", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"), "sk_live_4eC", '"PAY": "***"', 0),
    "env npm token": (_env("REG", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"), "npm_a1B2", '"REG": "***"', 0),
    "env PyPI token": (
        _env("UP", "pypi-AgEIcHlwaS5vcmcCJDk4ZjM2YjE0LTlhMzItNDk1Yi1hNTE0LWE2YzE3ZDVhNzQ5NgACKlsz"),
        "pypi-AgEI",
        '"UP": "***"',
        0,
    ),
    "env Redis URL with a password": (_env("CACHE", "redis://:r3dis-Pa55word@cache:6379/0"), "r3dis-Pa55", "***", 0),
    "env Azure connection string": (
        _env("STORE", f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={_AZURE}"),
        _AZURE[:20],
        '"STORE": "***"',
        0,
    ),
    "env Slack webhook": (
        _env("NOTIFY", "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/q1w2e3r4t5y6u7i8o9p0a1s2"),
        "q1w2e3r4t5y6",
        '"NOTIFY": "***"',
        0,
    ),
    "args --api-key=sk-…": (
        _dry("args: [--api-key=sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678]\n"),
        "sk-proj-Abc123",
        "--api-key=***",
        0,
    ),
    "hyperparameter hf_token": (_dry(f"hyperparameters: {{hf_token: {_HF}}}\n"), _HF, "--hf_token=***", 0),
    "a value under secrets:": (
        validate(SAGEMAKER + f"secrets: {{HF_TOKEN: {_HF}}}\n"),
        _HF,
        "received a value (37 characters, not shown), not a reference",
        2,
    ),
    "--set secrets.DB=…": (
        lambda tmp: ["validate", str(_config(tmp, SAGEMAKER)), "--set", "secrets.DB=plain-db-secret-9"],
        "plain-db-secret-9",
        "secrets.DB: received a value (17 characters, not shown)",
        2,
    ),
    "env DB_PASSWORD: a number": (
        validate(SAGEMAKER + "env: {DB_PASSWORD: 84736251}\n"),
        "84736251",
        "env.DB_PASSWORD: received a number (not shown: it may be secret)",
        2,
    ),
    "data folder with .env": (
        _data_with(".env", "DB_PASSWORD=plain-dotenv-value\n"),
        "plain-dotenv-value",
        "digits/.env is named like an environment file: not uploaded without --include",
        2,
    ),
    "data folder with .aws/credentials": (
        _data_with(".aws/credentials", _AWS_FILE),
        "wJalrXUtnFEMI",
        "digits/.aws is named like a credential file: not uploaded without --include",
        2,
    ),
    "package with an AWS credentials file": (
        _package_with("credentials", _AWS_FILE),
        "wJalrXUtnFEMI",
        "left out: trainer/credentials (credential-like)",
        0,
    ),
    "package with a PuTTY key, innocent name": (
        _package_with("notes.txt", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n"),
        "PuTTY-User-Key-File-3",
        "left out: trainer/notes.txt (holds a private key)",
        0,
    ),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("setup, secret, expected, code", LEAKS.values(), ids=LEAKS.keys())
def test_leaks_are_masked_or_refused(setup, secret, expected, code, project, tmp_path, capsys):
    project()
    got = main(setup(tmp_path))
    out, err = capsys.readouterr()
    assert got == code, err
    assert secret not in out + err
    assert expected in out + err, out + err
    if code == 2:  # a refusal: one line, no traceback
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


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
    # round 3: the environment names cloudtrain's launchers set, refused as the labels are (was: replaced silently)
    "reserved env CLOUDTRAIN_RUN_MODULE": (
        validate(SAGEMAKER + "env: {CLOUDTRAIN_RUN_MODULE: evil.module}\n"),
        "env.CLOUDTRAIN_RUN_MODULE: 'CLOUDTRAIN_RUN_MODULE' is set in the job by cloudtrain: a value of yours",
    ),
    "reserved env CLOUDTRAIN_SECRET_<NAME>": (
        validate(VERTEX + "env: {CLOUDTRAIN_SECRET_HF_TOKEN: projects/x/secrets/y}\n"),
        "env.CLOUDTRAIN_SECRET_HF_TOKEN: 'CLOUDTRAIN_SECRET_HF_TOKEN' is set in the job by cloudtrain, for a job",
    ),
    "reserved env CLOUDTRAIN_SWEEP_METRIC": (
        validate(VERTEX + "env: {CLOUDTRAIN_SWEEP_METRIC: loss}\n"),
        "env.CLOUDTRAIN_SWEEP_METRIC: 'CLOUDTRAIN_SWEEP_METRIC' is set in the job by cloudtrain, in a sweep's",
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
        0,  # the history cannot be read, and the run is found by its id in the project's cloudtrain-runs/
        "jobs.jsonl: is a FIFO, not a regular file; its records are ignored",
        "state: SUCCEEDED",
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


def test_a_local_sweep_whose_every_trial_failed_ends_failed_without_a_traceback(tmp_path, capfd):
    """Every trial exits 1: the sweep is FAILED (the CLI's exit 1), each trial one line of its own; Optuna's
    warning with the objective's traceback is not printed."""
    from cloudtrain.app.sweeps import drive as app_sweep
    from tests.sweeps.test_sweep_driver import ScriptedBackend, _spec

    events: list = []
    spec = _spec(tmp_path, max_trials=3, parallel_trials=1, algorithm="random")
    failing: Any = ScriptedBackend(lambda lr, e: lr, 0.0)  # every trial exits 1 (a scripted stand-in for a run)
    table = app_sweep.run_local(spec, None, on_event=events.append, backend=failing)
    assert table.state == "FAILED" and table.best is None
    assert [(t.state, t.message) for t in table.trials] == [("FAIL", "replica chief exited with code 1")] * 3
    assert [e.state for e in events] == ["started", "FAIL"] * 3
    assert "Traceback" not in capfd.readouterr().err


# --- Round 2: a local run's processes are known by pid and start time; nothing else is ever signalled ---

_BLOCKS_SIGTERM = (
    "import signal, sys, time\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"  # a SIGTERM sent stays pending: seen, not lost
    "print('ready', flush=True)\n"
    "time.sleep(120)\n"
)


def _sigterm_pending(pid: int) -> bool:
    fields = dict(
        line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line
    )
    return bool((int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)) & (1 << 14))  # bit 15-1: SIGTERM


# (details a running run's status.json records, the bystander leads its own process group, it is the run's own,
# cancel's exit code: 2 where the record names a live pid without the proof that it is the run's)
CANCEL = {
    "a replica pid now another process's": (
        lambda pid, start: {"pids": {"chief": pid}, "pid_starts": {"chief": start + 1}},
        True,
        False,
        0,
    ),
    "a detached run's owner pid now another process's": (
        lambda pid, start: {"pids": {}, "owner_pid": pid, "owner_start": start + 1},
        True,
        False,
        0,
    ),
    "an owner recorded without its start": (lambda pid, start: {"pids": {}, "owner_pid": pid}, False, False, 2),
    "a replica recorded without its start, leading no group": (
        lambda pid, start: {"pids": {"chief": pid}},
        False,
        False,
        2,
    ),
    # round 3: an unrelated `setsid` process leads its own group, as a replica does: it was SIGTERMed
    "a replica recorded without its start, leading its own group": (
        lambda pid, start: {"pids": {"chief": pid}},
        True,
        False,
        2,
    ),
    "a replica without its start, leading its group, not the run's Python": (
        lambda pid, start: {"pids": {"chief": pid}, "environment": "/nonexistent/env"},
        True,
        False,
        2,
    ),
    "the run's own replica (the control)": (
        lambda pid, start: {"pids": {"chief": pid}, "pid_starts": {"chief": start}},
        True,
        True,
        0,
    ),
}


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads a process's pending signals in /proc")
@pytest.mark.parametrize("details, leader, ours, code", CANCEL.values(), ids=CANCEL.keys())
def test_cancel_and_status_know_a_local_run_by_pid_and_start_time(details, leader, ours, code, recorded_run, capsys):
    import json
    import subprocess
    import sys

    from cloudtrain.leftovers import process_start

    proc = subprocess.Popen(
        [sys.executable, "-c", _BLOCKS_SIGTERM], stdout=subprocess.PIPE, text=True, start_new_session=leader
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        start = process_start(proc.pid)
        assert start is not None
        running = {**RUN_STATUS, "state": "RUNNING", "native_state": "running", "details": details(proc.pid, start)}
        (recorded_run / "status.json").write_text(json.dumps(running))
        assert main(["status", "demo-1", "-o", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["state"] == ("RUNNING" if ours else "FAILED")
        assert main(["cancel", "demo-1", "--no-wait"]) == code  # the run's own replica holds its SIGTERM pending
        err = capsys.readouterr().err.splitlines()
        if code == 2:
            assert len(err) == 1 and f"names pid {proc.pid} without the start time" in err[0], err
        assert _sigterm_pending(proc.pid) is ours  # the bystander never got a SIGTERM; the run's own replica did
    finally:
        proc.kill()
        proc.wait()


def test_a_replica_without_its_start_is_known_by_its_group_and_the_runs_python(recorded_run, tmp_path, capsys):
    """An older record (no start times) of a replica that leads its group and runs the run's environment's
    Python: cancel signals it."""
    import json
    import subprocess
    import sys

    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    os.symlink(sys.executable, env / "bin" / "python")
    proc = subprocess.Popen(
        [str(env / "bin" / "python"), "-c", _BLOCKS_SIGTERM], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        if not os.path.realpath(f"/proc/{proc.pid}/exe"):
            pytest.skip("no /proc")
        details = {"pids": {"chief": proc.pid}, "environment": str(env)}
        running = {**RUN_STATUS, "state": "RUNNING", "native_state": "running", "details": details}
        (recorded_run / "status.json").write_text(json.dumps(running))
        assert main(["cancel", "demo-1", "--no-wait"]) == 0
        assert _sigterm_pending(proc.pid)
    finally:
        proc.kill()
        proc.wait()


# --- Round 2: no state file is written through a link ---


def _link_to_precious(tmp_path: Path, path: Path) -> Path:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(precious, path)
    return precious


@pytest.mark.parametrize("name", ["chief.log", "lines.jsonl"])
def test_a_run_file_that_is_a_link_is_refused_and_its_target_untouched(name, tmp_path):
    import sys

    from cloudtrain.backends.local.processes import Launch, ReplicaGroup
    from cloudtrain.statefiles import StateError

    run_dir = tmp_path / "out" / "local-run"
    precious = _link_to_precious(tmp_path, run_dir / name)
    launch = Launch(
        "chief", [sys.executable, "-c", "print('written')"], dict(os.environ), str(tmp_path), run_dir / "chief.log"
    )
    with pytest.raises(StateError, match=f"{name}: is a link \\(to {precious}\\); not written through"):
        group = ReplicaGroup([launch], journal=run_dir / "lines.jsonl")
        group.start()
        group.wait()
    assert precious.read_text() == "keep me\n"


def test_a_history_that_is_a_link_is_not_written_through(tmp_path, caplog):
    from cloudtrain import history

    precious = _link_to_precious(tmp_path, history.history_file())
    history.record(history.JobRecord("demo-1", "/runs/demo-1", "local", "local"))
    assert precious.read_text() == "keep me\n"
    assert "cannot record job demo-1" in caplog.text


# --- Round 2: a bucket channel a folder cannot hold ---


def test_a_bucket_channel_holding_a_file_and_its_folder_is_one_line_for_a_local_run(aws, tmp_path):
    from cloudtrain.backends.sagemaker.aws import AwsClients, translated
    from cloudtrain.data import cache
    from cloudtrain.data.stores import S3Store
    from cloudtrain.errors import ExitCode, UsageError

    client = AwsClients("us-east-1").s3
    client.create_bucket(Bucket="staging")
    store = S3Store(client, "staging", translated)
    for key in ("ds/a.npz", "ds/x", "ds/x/y"):
        client.put_object(Bucket="staging", Key=key, Body=b"data")
    with pytest.raises(UsageError) as caught:
        cache.fetch("s3://staging/ds", tmp_path / "cache", store=store)
    assert caught.value.exit_code == ExitCode.BAD_INPUT
    assert str(caught.value).startswith(
        "s3://staging/ds: objects 'ds/x' and 'ds/x/y': in a folder, x cannot be both a file and the folder"
    )


# --- Round 2: SIGHUP (the terminal closed) means what Ctrl-C means ---


def test_sighup_unwinds_as_ctrl_c(recorded_run):
    """``logs --follow`` of a running local run, then its terminal closes: exit 130 and one line, as on
    Ctrl-C, never a death by signal that skips the clean-up (a ``--local`` submit stops its replicas there)."""
    import json
    import signal
    import subprocess
    import sys

    from cloudtrain.leftovers import process_start

    replica = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    follower = None
    try:
        details = {
            "replicas": ["chief"],
            "pids": {"chief": replica.pid},
            "pid_starts": {"chief": process_start(replica.pid)},
        }
        running = {**RUN_STATUS, "state": "RUNNING", "native_state": "running", "details": details}
        (recorded_run / "status.json").write_text(json.dumps(running))
        line = {"timestamp": "2025-01-01T00:00:01+00:00", "replica": "chief", "severity": "INFO", "message": "epoch 1"}
        (recorded_run / "lines.jsonl").write_text(json.dumps(line) + "\n")
        follower = subprocess.Popen(
            [sys.executable, "-m", "cloudtrain", "logs", "demo-1", "--follow"],
            cwd=recorded_run.parents[2],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert follower.stdout is not None and "epoch 1" in follower.stdout.readline()
        follower.send_signal(signal.SIGHUP)
        out, err = follower.communicate(timeout=60)
        assert follower.returncode == 130, err
        assert "Traceback" not in err
    finally:
        for proc in (replica, follower):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.timeout(30)  # a FIFO journal hung every command on the sweep
@pytest.mark.parametrize(
    "how, said",
    [("fifo", "is a FIFO, not a regular file"), ("/dev/zero", "is a link to /dev/zero, outside ")],
    ids=["a FIFO", "a link to /dev/zero"],
)
@pytest.mark.parametrize("command", [("status", "lr-sweep"), ("sweep", "results", "lr-sweep")])
def test_a_sweep_journal_that_is_not_a_regular_file_is_one_line_exit_2(swept, how, said, command, capsys):  # noqa: F811
    swept.unlink()
    if how == "fifo":
        os.mkfifo(swept)
    else:
        os.symlink(how, swept)
    assert main(list(command)) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [err.splitlines()[0]] and err.startswith(f"error: {swept}: {said}")


def test_status_of_a_local_sweep_whose_every_trial_failed_says_failed(tmp_path, monkeypatch, capsys):
    import json

    from cloudtrain import history
    from cloudtrain.app.sweeps import local as sweep_local
    from tests.sweeps.test_sweep_driver import ROOT, ScriptedBackend, _run, _spec

    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, max_trials=2, parallel_trials=1, algorithm="random")
    _run(spec, ScriptedBackend(lambda lr, e: lr, fail_above=0.0))
    folder = sweep_local.sweep_dir_of(spec)
    sweep_local.write_state(
        folder,
        config=str(ROOT / "job_configs" / "sweep.yaml"),
        overrides=("backend=local", "sweep.max_trials=2", "sweep.seed=7"),
        job_name=spec.job_name,
        created="2025-01-01T00:00:00+00:00",
    )
    history.record(history.JobRecord(spec.job_name, str(folder), "local", "us-central1", kind="sweep"))
    assert main(["status", spec.job_name, "-o", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["state"] == "FAILED" and shown["best_trial"] is None
