"""A second Ctrl-C during ``cloudtrain submit --local`` kills every replica at once (docs/reference/exit-codes.md).

The real CLI in its own process, two replicas of a trainer that ignores SIGTERM (its save
"hangs"), two real SIGINTs: the first starts the 10 s grace, the second must end it — the
replicas SIGKILLed, the run recorded CANCELLED, exit 130 — without waiting the grace out.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cloudtrain.errors import ExitCode

pytestmark = pytest.mark.slow


def _read_until(proc: subprocess.Popen, seen: list[str], *needles: str) -> None:
    """Read stdout lines until every needle has appeared (the CLI's own lines: no sleeping)."""
    missing = set(needles)
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line)
        missing = {n for n in missing if n not in "".join(seen)}
        if not missing:
            return
    raise AssertionError(f"the CLI ended before printing {missing}:\n{''.join(seen)[-3000:]}")


def _wait_for_line(path: Path, line: str, proc: subprocess.Popen) -> None:
    while not (path.is_file() and line in path.read_text(errors="replace")):
        assert proc.poll() is None, f"the CLI ended before {path.name} said {line!r}"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.is_file() and stat.read_text().split(") ", 1)[1].startswith("Z"))  # a zombie is gone


def test_second_ctrl_c_kills_every_replica_at_once_and_exits_130(chatty, cli_cache):
    config = chatty(replicas=2, args="[--stubborn, --sleep, '600']")
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cli_cache)}
    env.pop("FORCE_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", str(config)],
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    try:
        _read_until(proc, seen, "Epoch 2/2 on chief", "Epoch 2/2 on worker-0")
        run_dir = Path(next(line for line in seen if line.startswith("Run ")).split(" started in ", 1)[1].strip())
        pids = list(json.loads((run_dir / "local-run" / "status.json").read_text())["details"]["pids"].values())
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        proc.send_signal(signal.SIGINT)
        _read_until(proc, seen, "Ctrl-C again to kill now")
        for replica in ("chief", "worker-0"):  # the SIGTERM reached each; its answer is in the replica's log file
            _wait_for_line(run_dir / "local-run" / f"{replica}.log", f"{replica}: SIGTERM; still saving", proc)
        assert all(_alive(p) for p in pids)  # the grace period holds them: they ignore SIGTERM
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    out = "".join(seen) + out
    assert proc.returncode == ExitCode.INTERRUPTED, err[-3000:]
    assert "killing every replica now" in out  # the CLI took the second Ctrl-C
    # ... and the replica group cut its grace short (this notice is never written when the grace runs out)
    notices = [json.loads(line) for line in (run_dir / "local-run" / "lines.jsonl").read_text().splitlines()]
    assert {"replica": "cloudtrain", "message": "killing every replica now"} in [
        {"replica": n["replica"], "message": n["message"]} for n in notices
    ]
    assert f"Job {run_dir.name}: CANCELLED" in out
    deadline = time.monotonic() + 30  # reaped by the CLI before it exits; the bound only ends a broken run
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a replica outlived the second Ctrl-C"
    status = json.loads((run_dir / "local-run" / "status.json").read_text())
    assert status["state"] == "CANCELLED"


def test_replicas_lines_from_the_grace_period_are_printed_live(chatty, cli_cache):
    """After the first Ctrl-C the replicas are still saving: what they print meanwhile ("saved at step N")
    reaches the screen as it comes, not only their log files (#25 (d))."""
    config = chatty(replicas=2, args="[--stubborn, --sleep, '600']")
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cli_cache)}
    env.pop("FORCE_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", str(config)],
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    try:
        _read_until(proc, seen, "Epoch 2/2 on chief", "Epoch 2/2 on worker-0")
        proc.send_signal(signal.SIGINT)
        _read_until(proc, seen, "Ctrl-C again to kill now")
        # the replicas ignore SIGTERM: the CLI ends only after the 10 s grace, so these must come before it
        _read_until(proc, seen, "chief: SIGTERM; still saving", "worker-0: SIGTERM; still saving")
        assert proc.poll() is None  # printed while the grace period runs, not in a summary at the end
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == ExitCode.INTERRUPTED, err[-3000:]
    printed = "".join(seen) + out
    assert printed.count("chief: SIGTERM; still saving") == 1  # each line once: none replayed from the start
    assert printed.count("Epoch 1/2 on chief") == 1


def test_sighup_stops_a_local_run_as_ctrl_c_does(chatty, cli_cache):
    """The terminal closes under ``submit --local`` (SIGHUP): the replicas get their SIGTERM, the run is
    recorded CANCELLED and cloudtrain exits 130, as on Ctrl-C (issue 41: it was killed by the signal, the
    replicas outlived it for 33 s and the run stayed recorded as running)."""
    config = chatty(replicas=2, args="[--sleep, '600']")
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cli_cache)}
    env.pop("FORCE_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", str(config)],
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    try:
        _read_until(proc, seen, "Epoch 2/2 on chief", "Epoch 2/2 on worker-0")
        run_dir = Path(next(line for line in seen if line.startswith("Run ")).split(" started in ", 1)[1].strip())
        pids = list(json.loads((run_dir / "local-run" / "status.json").read_text())["details"]["pids"].values())
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == ExitCode.INTERRUPTED, err[-3000:]
    assert "Traceback" not in err
    assert f"Job {run_dir.name}: CANCELLED" in "".join(seen) + out
    assert not any(_alive(p) for p in pids), "a replica outlived the hang-up"
    assert json.loads((run_dir / "local-run" / "status.json").read_text())["state"] == "CANCELLED"
