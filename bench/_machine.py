"""Where and when the benchmarks ran: the machine (no hostname), versions, commit, load."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("tensorflow", "keras", "google-cloud-aiplatform", "google-cloud-logging", "sagemaker-core", "boto3", "moto")
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")  # what decides float32 vs bfloat16 speed on a CPU


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def loadavg() -> str:
    """The 1-, 5- and 15-minute load averages, as /proc/loadavg has them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    for line in text.split("\n\n", 1)[0].splitlines():  # the first processor is enough
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def _git_commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return commit + (" (uncommitted changes in the tree)" if dirty else "")


def _gpus() -> list[str]:
    if not shutil.which("nvidia-smi"):
        return []
    done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return [line.split(" (UUID")[0] for line in done.stdout.splitlines() if line.startswith("GPU")]


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def describe() -> dict:
    cpu = _cpuinfo()
    flags = set(cpu.get("flags", "").split())
    return {
        "cpu": cpu.get("model name") or platform.processor() or platform.machine(),
        "cpu_family_model": f"family {cpu.get('cpu family', '?')} model {cpu.get('model', '?')}" if cpu else "",
        "cpu_flags": [f for f in CPU_FLAGS if f in flags],
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "packages": {name: _version(name) for name in PACKAGES},
        "git_commit": _git_commit(),
        "gpus": _gpus(),
    }
