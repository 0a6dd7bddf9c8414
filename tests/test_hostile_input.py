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
