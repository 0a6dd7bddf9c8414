"""Hostile values in every field that reaches a Slurm script, an #SBATCH line or an ssh command line (issue #48).

Two kinds of row: values a config cannot hold (a control character, a login that ssh reads as an option, an
owned sbatch option in another spelling), refused by ``validate`` in one line naming the field; and values it
can hold (blanks, quotes, ``$(…)``, ``%``, ``#``), with which the batch, array and trial scripts are
rendered, checked by ``bash -n``, their ``#SBATCH`` block parsed as sbatch parses it (``PARSE`` below, written
from sbatch's script parser, not from ours) and each script run by bash with stand-ins for ``srun`` and the
sweep tool, which record the argv they get: the commands are exactly the expected ones and nothing else ran.
The last rows submit through the real cluster's ``sbatch`` and read back what the controller recorded.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cloudtrain.backends.slurm import script, sweep_array, sweep_trial
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError, UsageError
from cloudtrain.spec import build_spec
from tests.slurm.test_slurm_config import NOW, write_config
from tests.slurm.test_sweep_offline import SWEEP

REPO = Path(__file__).resolve().parents[2]
CANARY = "CANARY"
#: Workdir names a config may hold; each would have become code or broken a line on the old scripts.
HOSTILE_DIRS = {
    "blank": "work dir",
    "command": f"w$(touch {CANARY})",
    "backticks": f"w`touch {CANARY}`",
    "quotes": 'it\'s "here"',
    "percent": "w%j%x",
    "hash": "w #SBATCH --time=1",
    "semicolon": f"w;touch {CANARY};",
}


def sbatch_parse(line: str) -> list[str]:
    """The arguments of one ``#SBATCH`` line as Slurm's sbatch reads them (``_get_argument`` in
    src/sbatch/opt.c): a blank outside quotes ends an argument, ``\\`` takes the next character (inside
    quotes too), ``'``/``"`` quote, an unquoted ``#`` ends the line, and so does an argument of no character."""
    args, i, n = [], 0, len(line)
    while i < n:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            break
        out, quote, escape = [], "", False
        while i < n and (quote or not line[i].isspace()):
            c = line[i]
            i += 1
            if escape:
                escape = False
            elif c == "\\":
                escape = True
                continue
            elif quote:
                if c == quote:
                    quote = ""
                    continue
            elif c in "\"'":
                quote = c
                continue
            elif c == "#":
                i = n
                break
            out.append(c)
        if not out:  # no character: _get_argument returns NULL, and sbatch reads no more of the line
            break
        args.append("".join(out))
    return args


def directives(text: str) -> list[str]:
    """Every argument sbatch takes from the script's ``#SBATCH`` block: it stops at the first line
    that is neither a comment nor blank."""
    found = []
    for line in text.splitlines()[1:]:
        if line.startswith("#SBATCH"):
            found += sbatch_parse(line[len("#SBATCH") :])
        elif line.strip() and not line.startswith("#"):
            break
    return found


def bash_n(text: str) -> None:
    result = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def recorder(path: Path, log: Path, extra: str = "") -> None:
    """An executable that appends its argv (JSON) to ``log``, then runs ``extra`` (shell)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n    f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
        + (f"import subprocess\nsubprocess.run(['bash', '-c', {extra!r}, *sys.argv[1:]], check=True)\n" * bool(extra))
    )
    path.chmod(0o755)


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def spec_in(tmp_path: Path, name: str, changes: dict | None = None):
    workdir = tmp_path / name
    workdir.mkdir(parents=True)
    config = write_config(tmp_path, {"slurm": {"workdir": str(workdir)}, **(changes or {})})
    return build_spec(load_config(config), now=NOW, suffix="abc123"), workdir


def run_job_script(text: str, path: Path, cwd: Path) -> subprocess.CompletedProcess:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    env = {"PATH": os.environ["PATH"], "SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "n1", "HOME": str(cwd)}
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, cwd=cwd, env=env, timeout=60)


def expected_srun(run: str, python: str) -> list[str]:
    task = 'set -e\nexec "$0" "$@"'
    return [
        "--export=ALL",
        "--kill-on-bad-exit=0",
        f"--output={run}/slurm/r0/task-%t.log",
        "bash",
        "-c",
        task,
        python,
        f"{run}/slurm/launcher.py",
        f"{run}/slurm/tasks.json",
    ]


@pytest.mark.parametrize("case", sorted(HOSTILE_DIRS))
def test_the_batch_script_with_a_hostile_workdir_runs_exactly_its_commands(case, tmp_path):
    spec, workdir = spec_in(tmp_path, HOSTILE_DIRS[case])
    python = f"{workdir}/envs/pkg-0123/bin/python"
    text = script.batch_script(spec, script.Paths.of(spec, python))
    bash_n(text)
    run = spec.output_dir
    assert directives(text) == [
        "--job-name=demo-20261125-120000-abc123",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--gpus-per-node=4",
        "--time=0-02:00:00",
        "--signal=B:USR1@120",
        f"--output={run.replace('%', '%%')}/slurm/batch-%j.log",
        "--open-mode=append",
        "--no-requeue",
        "--export=NONE",
    ]
    log = tmp_path / "srun.calls"
    recorder(Path(python).parent / "srun", log)
    result = run_job_script(text, Path(run) / "slurm" / "job.sh", tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls(log) == [expected_srun(run, python)]
    assert (Path(run) / "slurm" / "r0" / "batch.exit").read_text() == "0\n"
    assert not list(tmp_path.rglob(CANARY)), "a part of the workdir ran as a command"


@pytest.mark.parametrize("case", sorted(HOSTILE_DIRS))
def test_a_sweeps_array_and_trial_scripts_with_a_hostile_workdir_run_exactly_their_commands(case, tmp_path):
    spec, workdir = spec_in(tmp_path, HOSTILE_DIRS[case], SWEEP)
    folder = spec.output_dir
    tool = f"{workdir}/envs/deps-1/bin/python"
    array = sweep_array.array_script(spec, folder, tool)
    bash_n(array)
    args = directives(array)
    assert args[-1] == f"--output={folder.replace('%', '%%')}/slurm/batch-%A_%a.log"
    assert [a for a in args if a.startswith("--output=")] == [args[-1]]
    # the trial: its template filled in as the node fills it, then run
    trial = sweep_array.template_spec(spec)
    python = f"{workdir}/envs/pkg-0123/bin/python"
    template = script.batch_script(trial, script.Paths.of(trial, python))
    run = f"{folder}/trial-000"
    job = sweep_trial.filled(template, run, "demo-t000", {}, shlex.quote)
    bash_n(job)
    log = tmp_path / "srun.calls"
    recorder(Path(python).parent / "srun", log)
    result = run_job_script(job, Path(run) / "slurm" / "job.sh", tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls(log) == [expected_srun(run, python)]
    # the array task: ask for the trial, run its job.sh, tell the result
    Path(folder, "sweep.json").write_text("{}")
    tool_log = tmp_path / "tool.calls"
    recorder(Path(tool), tool_log, extra='[ "$1" = ask ] && printf "%s\\n" "$RUN_FOLDER" || true')
    env = {**os.environ, "SLURM_ARRAY_JOB_ID": "9", "SLURM_ARRAY_TASK_ID": "0", "SLURM_JOB_ID": "10"}
    env["RUN_FOLDER"] = run
    Path(run, "slurm", "job.sh").write_text("echo trial ran\n")
    result = subprocess.run(["bash", "-c", array, "array.sh"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    trial_py = f"{folder}/slurm/sweep_trial.py"
    assert calls(tool_log) == [[trial_py, "ask", folder, ""], [trial_py, "tell", folder, run, "0", ""]]
    assert Path(run, "slurm", "batch-10.log").read_text() == "trial ran\n"
    assert not list(tmp_path.rglob(CANARY)), "a part of the workdir ran as a command"


def test_the_trials_tasks_plan_with_a_hostile_workdir_is_json_of_its_paths(tmp_path):
    template = json.dumps({"run": "@RUN@", "out": "@RUN@/slurm", "argv": ["--lr=@P:lr@"]})
    run = str(tmp_path / 'a "b" \\c' / "trial-000")
    plan = json.loads(sweep_trial.filled(template, run, "j", {"lr": 'x"\\'}, lambda t: json.dumps(t)[1:-1]))
    assert plan == {"run": run, "out": f"{run}/slurm", "argv": ['--lr=x"\\']}


def test_the_config_files_name_is_written_as_one_comment_line(tmp_path):
    folder = tmp_path / "cfg #1 $(x)"
    folder.mkdir()
    config = write_config(folder, {"slurm": {"workdir": "/fsx/c"}})
    spec = build_spec(load_config(config), now=NOW, suffix="abc123")
    spec = dataclasses.replace(spec, config_file=config.with_name("my job; $(touch x).yaml"))
    text = script.batch_script(spec, script.Paths.of(spec, "/fsx/c/envs/p/bin/python"))
    assert text.splitlines()[1] == "# demo-20261125-120000-abc123: written by cloudtrain from my job; $(touch x).yaml"
    hostile = dataclasses.replace(spec, config_file=Path("/a/b\necho x.yaml"))
    with pytest.raises(UsageError, match="control character"):
        script.batch_script(hostile, script.Paths.of(spec, "p"))


# --- what validate refuses -------------------------------------------------------------------------------

REFUSED = [
    ({"slurm": {"workdir": "/fsx/x\necho pwned"}}, "slurm.workdir", "control character"),
    ({"slurm": {"workdir": "/f\rsx"}}, "slurm.workdir", "control character"),
    ({"slurm": {"workdir": "/fsx/a\\b"}}, "slurm.workdir", "no backslash"),
    ({"slurm": {"workdir": "/fsx", "constraint": "a100\necho pwned"}}, "slurm.constraint", "control character"),
    ({"slurm": {"workdir": "/fsx", "constraint": "a100 --time=1"}}, "slurm.constraint", "features"),
    ({"slurm": {"workdir": "/fsx", "constraint": "a100#x"}}, "slurm.constraint", "features"),
    ({"slurm": {"workdir": "/fsx", "python": "python3\nid"}}, "slurm.python", "control character"),
    ({"data": {"train": "/data\nx"}}, "data.train", "control character"),
    ({"package": {"path": "trainer\tx", "module": "trainer.task"}}, "package.path", "control character"),
    ({"slurm": {"workdir": "/fsx", "login": "-V"}}, "slurm.login", "ssh destination"),
    ({"slurm": {"workdir": "/fsx", "login": "-Fsomething"}}, "slurm.login", "ssh destination"),
    ({"slurm": {"workdir": "/fsx", "login": "-oProxyCommand=id@h"}}, "slurm.login", "ssh destination"),
    ({"slurm": {"workdir": "/fsx", "login": "-l@host"}}, "slurm.login", "ssh destination"),
    ({"slurm": {"workdir": "/fsx", "login": "host -V"}}, "slurm.login", "ssh destination"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["-t1"]}}, "slurm.sbatch[0]", "set max_runtime instead"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["-o/dev/null"]}}, "slurm.sbatch[0]", "--output"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["-N3"]}}, "slurm.sbatch[0]", "set replica_count instead"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["-vN3"]}}, "slurm.sbatch[0]", "--nodes"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["--outp=/dev/null"]}}, "slurm.sbatch[0]", "--output"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["--chd=/"]}}, "slurm.sbatch[0]", "--chdir"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["--mem=0 --time=1"]}}, "slurm.sbatch[0]", "--time"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["--mem=0", "--exclusive -o /x"]}}, "slurm.sbatch[1]", "--output"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ['"--time"=5']}}, "slurm.sbatch[0]", "--time"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["--gpus=8"]}}, "slurm.sbatch[0]", "machine.accelerator_count"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["--array=0-99"]}}, "slurm.sbatch[0]", "sweep"),
    ({"slurm": {"workdir": "/fsx", "sbatch": ["--mem=0\n--time=1"]}}, "slurm.sbatch[0]", "control character"),
]


@pytest.mark.parametrize(("changes", "field", "words"), REFUSED, ids=[f"{r[1]}:{r[0]}"[:60] for r in REFUSED])
def test_validate_refuses_a_hostile_value_in_one_line_naming_the_field(changes, field, words, tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path, changes))
    message = str(info.value)
    assert field in message and words in message and "\n" not in message.replace("\\n", ""), message


def test_a_config_file_whose_name_holds_a_newline_is_refused_in_one_line(tmp_path):
    config = write_config(tmp_path, {"slurm": {"workdir": "/fsx"}})
    hostile = config.with_name("job\necho pwned.yaml")
    config.rename(hostile)
    result = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "validate", "--config", str(hostile)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "config file's name 'job\\necho pwned.yaml'" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("line", ["--mem=0", "--mem 0", "--exclusive=user", "--gres-flags=enforce-binding"])
def test_slurm_sbatch_lines_of_options_cloudtrain_does_not_write_are_kept(line, tmp_path):
    spec = build_spec(
        load_config(write_config(tmp_path, {"slurm": {"workdir": "/fsx", "sbatch": [line]}})), now=NOW, suffix="a"
    )
    assert script.sbatch_options(spec)[-1] == line


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   ",
        "--mem=0",
        "  --mem=0   --time=1  ",
        '--job-name="a b"',
        "--job-name='a \"b'",
        '--comment="it\'s"',
        "--job-name=a\\ b",  # a blank ends the argument even after a backslash
        '--comment=x\\"y',
        '--comment="x\\"y"',
        "--mem=0 # a comment",
        "--comment=a#b",
        "#--mem=0",
        '--comment=""',
        '""',
        "''",
        "\\",
        "-t1 -o/dev/null",
        "--job-name=XX",
        "--a=\"b c\"d'e f'",
    ],
)
def test_the_check_reads_an_sbatch_line_as_sbatch_does(line):
    """slurm.sbatch lines are checked on what sbatch takes from them: the product's reader agrees with the
    parser written from sbatch's source, on every quoting and comment form."""
    assert script.sbatch_arguments(line) == sbatch_parse(line), line


def test_an_unclosed_quote_in_a_slurm_sbatch_line_is_refused_in_one_line_as_sbatch_would():
    from cloudtrain.backends.slurm.checks import sbatch_line_problem

    assert sbatch_line_problem('--comment="unclosed') == (
        "received '--comment=\"unclosed': an unclosed \", which sbatch refuses",
        "close the quote",
    )


def test_every_sbatch_option_cloudtrain_does_not_own_passes_the_check():
    """Read from the installed sbatch's own --help: no option of sbatch's is refused for looking like an owned one."""
    from cloudtrain.backends.slurm.checks import OWNED, sbatch_line_problem

    conf = Path(os.environ.get("TMPDIR", "/tmp")) / f"sbatch-help-{os.getpid()}.conf"
    conf.write_text("ClusterName=help\nSlurmctldHost=localhost\n")
    try:
        text = subprocess.run(
            ["sbatch", "--help"], capture_output=True, text=True, env={**os.environ, "SLURM_CONF": str(conf)}
        ).stdout
    finally:
        conf.unlink()
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", text))
    assert len(options) > 80, text
    for name in sorted(options - set(OWNED) - {"--help", "--usage", "--version"}):
        assert sbatch_line_problem(f"{name}=1") is None, name
    for name in OWNED:
        assert name in options | {"--open-mode"}, name  # an owned option sbatch does not know would be a typo here
        assert sbatch_line_problem(f"{name}=1") is not None, name


def test_ssh_gets_the_destination_after_every_option_and_after_double_dash(monkeypatch, tmp_path):
    monkeypatch.setenv("CLOUDTRAIN_SSH_CONFIG", str(tmp_path / "ssh config"))
    argv = ClusterShell("me@login1:2222").argv(["test", "-e", "/a b"])
    cut = argv.index("--")
    assert argv[cut + 1 :] == ["me@login1", "test -e '/a b'"]
    assert all(not a.startswith("me@") for a in argv[:cut]) and "-p" in argv[:cut] and "-F" in argv[:cut]
    assert "ConnectTimeout=20" in argv[:cut]


# --- on the real cluster ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.parametrize("case", ["blank", "quotes", "percent", "hash"])
def test_sbatch_reads_each_quoted_value_back_exactly(case, slurm, tmp_path):
    """What script.option writes, sbatch records: the output file's path and the job name, as written."""
    folder = tmp_path / HOSTILE_DIRS[case]
    folder.mkdir()
    name = f"n {HOSTILE_DIRS[case]}"
    header = [script.option("--job-name", name), script.option("--output", f"{script.filename(str(folder))}/o-%j")]
    job = folder / "job.sh"
    job.write_text("#!/bin/bash\n" + "".join(f"#SBATCH {h}\n" for h in header) + 'echo "ran as $SLURM_JOB_NAME"\n')
    job_id = slurm.run("sbatch", "--parsable", "--partition=debug", str(job)).stdout.strip().split(";")[0]
    out = folder / f"o-{job_id}"
    deadline = time.monotonic() + 60
    while not (out.exists() and out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert sorted(p.name for p in folder.iterdir()) == sorted(["job.sh", out.name])
    assert out.read_text() == f"ran as {name}\n"


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.parametrize(
    "line",
    [
        "--comment=a#b",
        "--comment='x y' # --time=1",
        '--comment=x\\"y',
        "--comment=ok '' --time=1",
        "--comment=e\\ --time=2",
    ],
)
def test_the_real_sbatch_reads_a_line_as_the_check_does(line, slurm, tmp_path):
    """The comment and time limit the controller records are what script.sbatch_arguments read from the line."""
    job = tmp_path / "job.sh"
    job.write_text(f"#!/bin/bash\n#SBATCH --time=10 --output={tmp_path}/o.log --nodes=1\n#SBATCH {line}\ntrue\n")
    job_id = slurm.run("sbatch", "--parsable", "--hold", str(job)).stdout.strip().split(";")[0]
    try:
        comment, limit = slurm.run("squeue", "-h", "-j", job_id, "-o", "%k|%l").stdout.strip().split("|")
    finally:
        slurm.run("scancel", job_id, check=False)
    read = dict(arg.split("=", 1) for arg in script.sbatch_arguments(line))
    assert (comment, limit) == (read["--comment"], f"{int(read.get('--time', 10))}:00"), line


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.parametrize("line", ["-t1", "-o/dev/null", "--outp=/dev/null", "--chd=/", "--mem=0 --time=1", "-vN2"])
def test_the_real_sbatch_takes_each_spelling_validate_refuses(line, slurm, tmp_path):
    """Why the check reads lines as sbatch does: each spelling changes the job (the later value wins)."""
    job = tmp_path / "job.sh"
    job.write_text(f"#!/bin/bash\n#SBATCH --time=10 --output={tmp_path}/o.log --chdir={tmp_path} --nodes=1\n")
    job.write_text(job.read_text() + f"#SBATCH {line}\ntrue\n")
    job_id = slurm.run("sbatch", "--parsable", "--hold", str(job)).stdout.strip().split(";")[0]
    try:
        shown = dict(
            w.split("=", 1) for w in slurm.run("scontrol", "show", "job", "-o", job_id).stdout.split() if "=" in w
        )
    finally:
        slurm.run("scancel", job_id, check=False)
    changed = {
        "TimeLimit": shown["TimeLimit"] != "00:10:00",
        "StdOut": shown["StdOut"] != f"{tmp_path}/o.log",
        "WorkDir": shown["WorkDir"] != str(tmp_path),
        "NumNodes": shown["NumNodes"] != "1",
    }
    assert any(changed.values()), shown
    from cloudtrain.backends.slurm.checks import sbatch_line_problem

    assert sbatch_line_problem(line) is not None


SUBMIT = """\
name: hostile
backend: slurm
slurm:
  workdir: {workdir}
  partition: debug
replica_count: 1
machine:
  accelerator_count: 0
package:
  path: {package}
  module: slurm_probe.task
"""


@pytest.mark.slow
@pytest.mark.server
def test_a_job_in_a_hostile_workdir_runs_on_the_cluster_and_runs_nothing_else(slurm, tmp_path, tf_cache):
    workdir = tmp_path / f"w d$(touch {CANARY})%x 'q'"
    workdir.mkdir()
    (tf_cache / "envs").mkdir(parents=True, exist_ok=True)
    (workdir / "envs").symlink_to(tf_cache / "envs")
    config = tmp_path / "job.yaml"
    config.write_text(SUBMIT.format(workdir=json.dumps(str(workdir)), package=REPO / "tests/packages/slurm_probe"))
    result = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config), "-o", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run = next((workdir / "runs").iterdir())
    logs = sorted((run / "slurm").glob("batch-*.log"))
    assert logs and "cloudtrain: job" in logs[0].read_text(), list((run / "slurm").iterdir())
    assert (run / "slurm" / "r0" / "batch.exit").read_text() == "0\n"
    assert not list(tmp_path.rglob(CANARY)) and not list(Path.cwd().glob(CANARY))


@pytest.mark.slow
@pytest.mark.server
def test_a_failed_tasks_last_lines_show_secret_values_masked_everywhere(slurm, workdir, tmp_path, monkeypatch):
    """failed_task_output in the submit summary, status (text and JSON) and the run record: *** for the values."""
    from tests.slurm.test_secrets import API_KEY, TOKEN
    from tests.slurm.test_submit import cloudtrain, job_id_of, probe_config

    monkeypatch.setenv("CT_TEST_TOKEN", TOKEN)
    config = probe_config(tmp_path, workdir, ["--lines=0", "--print-env=HF_TOKEN", "--print-env=API_KEY", "--exit=1"])
    config.write_text(config.read_text() + f"secrets:\n  HF_TOKEN: shell:CT_TEST_TOKEN\nenv:\n  API_KEY: {API_KEY}\n")
    result = cloudtrain("submit", "--config", str(config), "-o", "json")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    job_id = job_id_of(result.stderr + result.stdout)
    shown = [out, cloudtrain("status", job_id).stdout, cloudtrain("status", job_id, "-o", "json").stdout]
    shown.append(cloudtrain("list", "-o", "json").stdout)
    status = json.loads(shown[2])
    lines = status["details"]["failed_task_output"]
    assert any("ENV HF_TOKEN=***" in line for line in lines) and any("ENV API_KEY=***" in line for line in lines)
    for text in shown:
        assert TOKEN not in text and API_KEY not in text, text


def test_a_script_mode_trial_gets_each_swept_value_as_name_equals_value(tmp_path):
    """As docs/how-to/sweeps.md promises on every backend; a one-letter name was ``-a 1`` (the toolkit's form)."""
    from cloudtrain.backends.slurm.tasks import tasks_plan
    from cloudtrain.packaging import BuiltPackage

    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print(1)\n")
    sweep = {**SWEEP["sweep"], "params": {"a": {"values": [1, 2]}, "lr": {"min": 0.001, "max": 0.1}}}
    changes = {"package": {"path": "code", "script": "train.py"}, "sweep": sweep, "hyperparameters": {"b": 3}}
    spec = build_spec(load_config(write_config(tmp_path, changes)), now=NOW, suffix="abc123")
    trial = sweep_array.template_spec(spec)
    package = BuiltPackage(Path("/dist/t-0.1-ab.tar.gz"), "ab" * 32, 0, "t", "0.1", "t-0.1-ab.tar.gz", (), ())
    template = json.dumps(tasks_plan(trial, package, "/p/bin/python", {}))
    plan = json.loads(sweep_trial.filled(template, "/fsx/r", "j", {"a": 2, "lr": 0.01}, lambda t: json.dumps(t)[1:-1]))
    argv = plan["tasks"][0]["argv"]
    assert "--a=2" in argv and "--lr=0.01" in argv and "-a" not in argv, argv
    assert argv[argv.index("-b") + 1] == "3", argv  # the config's own hyperparameters as a script gets them


@pytest.mark.slow
@pytest.mark.server
def test_a_gpu_request_the_cluster_has_no_gres_for_is_refused_before_any_environment_is_built(slurm, tmp_path):
    from tests.slurm.test_submit import cloudtrain, probe_config

    workdir = tmp_path / "fresh"  # no environment cache: a build would show here
    config = probe_config(tmp_path, workdir, ["--lines=1"])
    config.write_text(config.read_text().replace("accelerator_count: 0", "accelerator_count: 1"))
    result = cloudtrain("submit", "--config", str(config))
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the cluster can never run this request" in errors[0], result.stderr
    assert not (workdir / "envs").exists() and not (workdir / "packages").exists()


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.parametrize(("options", "words"), [("size=256k", "No space left"), ("ro", "Read-only file system")])
def test_a_full_or_read_only_workdir_is_one_line_naming_it(options, words, slurm, tmp_path):
    from tests.slurm.test_submit import cloudtrain, probe_config

    workdir = tmp_path / "mounted"
    workdir.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(workdir)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.decode().strip()}")
    try:
        result = cloudtrain("submit", "--config", str(probe_config(tmp_path, workdir, ["--lines=1"])))
    finally:
        subprocess.run(["umount", str(workdir)], check=True)
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"slurm.workdir {workdir} cannot be written" in errors[0], result.stderr
    assert words in errors[0] and "Traceback" not in result.stderr


@pytest.mark.slow
@pytest.mark.server
def test_a_login_host_that_accepts_and_never_answers_is_one_line_naming_it(tmp_path, monkeypatch):
    """Was 121 s of silence, then an error naming an internal ``test -e``; now ssh's ConnectTimeout bounds the
    banner wait (the subprocess timeout below is the bound, not a measurement)."""
    import socket

    from tests.slurm.test_submit import cloudtrain, probe_config

    server = socket.create_server(("127.0.0.1", 0))
    held = []
    accept = threading.Thread(target=lambda: held.append(server.accept()), daemon=True)
    accept.start()
    ssh_config = tmp_path / "ssh_config"
    port = server.getsockname()[1]
    ssh_config.write_text(f"Host silent-login\n  HostName 127.0.0.1\n  Port {port}\n  User nobody\n")
    monkeypatch.setenv("CLOUDTRAIN_SSH_CONFIG", str(ssh_config))
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    config = probe_config(tmp_path, Path("/fsx/cloudtrain"), ["--lines=1"])
    config.write_text(config.read_text().replace("slurm:\n", "slurm:\n  login: silent-login\n"))
    try:
        result = cloudtrain("submit", "--config", str(config), timeout=90)
    finally:
        server.close()
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode != 0 and len(errors) == 1, result.stdout + result.stderr
    assert "ssh silent-login:" in errors[0] and "test -e" not in errors[0], errors
