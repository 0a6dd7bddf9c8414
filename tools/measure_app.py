"""The measurements issue #30 asks for, each one command (run from the repository root):

    .venv/bin/python tools/measure_app.py walk                      # submit --dry-run of job_configs/gpu4.yaml
    .venv/bin/python tools/measure_app.py walk --local              # submit --local (a small package, no TensorFlow)
    .venv/bin/python tools/measure_app.py dry-run-cost [--runs 7]   # CPU seconds above `python -c pass`
    .venv/bin/python tools/measure_app.py install-size              # one extra against all, from uv.lock

``walk`` traces, with ``sys.setprofile`` (every thread), each call into a function of cloudtrain/ and
finds its caller (the nearest cloudtrain frame below it). A *step* is a call from one module into
another; a *climb* is a step from a lower floor to a higher one, floors as tests/architecture/import_graph.py
defines them (entry → app → backends → core): a callback or a late import that runs back up. The
*longest walk* is the deepest chain of steps on one stack. Not a test: numbers for the issue's note.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cloudtrain.text import numbers  # noqa: E402
from tests.architecture.import_graph import FLOORS, floor  # noqa: E402  (the one definition of the floors)

PACKAGE = str(REPO / "cloudtrain") + os.sep
GPU4 = REPO / "job_configs" / "gpu4.yaml"
CHATTY = REPO / "tests" / "packages" / "chatty_trainer"


def module_of(frame: FrameType) -> str | None:
    """The dotted cloudtrain module a frame runs in, else None."""
    path = frame.f_code.co_filename
    if not path.startswith(PACKAGE):
        return None
    parts = list(Path(path).relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@dataclass
class Walk:
    """What the profiler saw: module-to-module steps, their climbs, the deepest chain of steps."""

    entered: set[str] = field(default_factory=set)
    steps: Counter[tuple[str, str]] = field(default_factory=Counter)
    longest: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = module_of(frame)
        if callee is None or frame.f_code.co_name == "<module>":  # an import running a module is not a call;
            return  # what its top-level code calls is called by that module
        chain = [callee]  # this frame's module, then each different module below it on the stack
        below = frame.f_back
        while below is not None:
            name = module_of(below)
            if name is not None and name != chain[-1]:
                chain.append(name)
            below = below.f_back
        with self.lock:
            self.entered.add(callee)
            if len(chain) > 1:
                self.steps[(chain[1], callee)] += 1
            if len(chain) > len(self.longest):
                self.longest = list(reversed(chain))

    def climbs(self) -> dict[tuple[str, str], int]:
        return {(a, b): n for (a, b), n in self.steps.items() if _above(b, a)}


def _above(callee: str, caller: str) -> bool:
    """``callee`` is on a higher floor than ``caller`` (floor 0 is the top)."""
    up, down = floor(callee), floor(caller)
    return up is not None and down is not None and up < down


def trace(argv: list[str]) -> tuple[int, Walk]:
    from cloudtrain.cli import main  # the CLI itself, in this process, so its calls can be traced

    walk = Walk()
    threading.setprofile(walk.profile)
    sys.setprofile(walk.profile)
    try:
        code = main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return code, walk


def floor_name(module: str) -> str:
    number = floor(module)
    return "root" if number is None else FLOORS[number][0]


def show_walk(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="cloudtrain-walk-") as scratch:
        cache = Path(scratch, "cache")
        os.environ["CLOUDTRAIN_CACHE_DIR"] = str(cache)  # the user's history stays untouched
        # the tests' own cache (tests/conftest.py::tf_cache)
        envs = Path(os.environ.get("CLOUDTRAIN_TEST_ENV_CACHE") or REPO / ".test-cache" / "envs")
        (envs / "envs").mkdir(parents=True, exist_ok=True)
        cache.mkdir()
        (cache / "envs").symlink_to(envs / "envs")  # the local image layer (TensorFlow) the tests build once
        config = Path(args.config).resolve() if args.config else None
        if args.local:
            os.chdir(scratch)  # the local run's folder
            if config is None:
                config = Path(scratch, "chatty.yaml")
                config.write_text(
                    textwrap.dedent(f"""\
                    name: chatty
                    backend: vertex
                    region: us-central1
                    project: my-project
                    staging_bucket: gs://my-bucket
                    machine: {{type: n1-standard-4}}
                    package: {{path: {CHATTY}, module: chatty_trainer.task}}
                    args: [--epochs, "2"]
                    """)
                )
            argv = ["submit", "--config", str(config), "--local"]
        else:
            argv = ["submit", "--config", str(config or GPU4), "--dry-run", "-o", "json"]
        with open(os.devnull, "w") as quiet, _redirect_stdout(quiet):
            code, walk = trace(argv)
    climbs = walk.climbs()
    into_cli = sum(1 for (a, b) in walk.steps if b.startswith("cloudtrain.cli") and not a.startswith("cloudtrain.cli"))
    print(f"cloudtrain {' '.join(argv)}  (exit {code})")
    print(f"modules entered: {len(walk.entered)}")
    print(f"module-to-module steps: {len(walk.steps)} distinct, {sum(walk.steps.values())} calls")
    print(f"climbs (a lower floor calling a higher one): {len(climbs)} distinct, {sum(climbs.values())} calls")
    for (a, b), n in sorted(climbs.items()):
        print(f"  {a} ({floor_name(a)}) → {b} ({floor_name(b)}): {n}")
    print(f"steps into cli/ from outside it: {into_cli}")
    print(f"longest walk: {len(walk.longest) - 1} steps")
    for n, module in enumerate(walk.longest):
        print(f"  {n:2d}. {module} ({floor_name(module)})")
    return 0


class _redirect_stdout:
    """The dry-run's JSON off the report (file descriptor 1 too: the CLI's console writes to it)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.saved, self.fd = stream, sys.stdout, -1

    def __enter__(self) -> None:
        sys.stdout.flush()
        self.fd = os.dup(1)
        os.dup2(self.stream.fileno(), 1)
        sys.stdout = self.stream

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
        os.dup2(self.fd, 1)
        os.close(self.fd)
        sys.stdout = self.saved


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one child process (and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def show_dry_run_cost(args: argparse.Namespace) -> int:
    python = sys.executable
    cli = str(Path(python).with_name("cloudtrain"))
    dry_run = [cli, "submit", "--config", str(args.config or GPU4), "--dry-run"]
    with tempfile.TemporaryDirectory(prefix="cloudtrain-cost-") as scratch:
        env = dict(os.environ, CLOUDTRAIN_CACHE_DIR=scratch)
        cpu_seconds(dry_run, env)  # once first: bytecode written, the package cache warm
        bare = sorted(cpu_seconds([python, "-c", "pass"], env) for _ in range(args.runs))
        full = sorted(cpu_seconds(dry_run, env) for _ in range(args.runs))
    print(f"CPU seconds (user + sys), median of {args.runs} (min–max):")
    print(f"  python -c pass: {statistics.median(bare):.3f} ({bare[0]:.3f}–{bare[-1]:.3f})")
    print(f"  cloudtrain {' '.join(dry_run[1:])}: {statistics.median(full):.3f} ({full[0]:.3f}–{full[-1]:.3f})")
    print(f"  above the interpreter: {statistics.median(full) - statistics.median(bare):.3f}")
    return 0


def find_uv() -> str:
    for candidate in (os.environ.get("UV"), shutil.which("uv"), str(REPO / ".tools" / "bin" / "uv")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("install-size: no uv (set UV=/path/to/uv, or `make install` bootstraps .tools/bin/uv)")


def show_install_size(args: argparse.Namespace) -> int:
    """Each extra's locked dependencies (``uv sync --frozen``: the lock, no resolution) installed into a
    throwaway environment from uv's cache (``--offline``: no network; a wheel missing from the cache
    fails with uv's own message), its files summed."""
    uv = find_uv()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(f"installed size of the locked dependencies (no dev group), Python {version}, a fresh environment:")
    with tempfile.TemporaryDirectory(prefix="cloudtrain-size-") as scratch:
        for extra in args.extras:
            venv = Path(scratch, extra)
            flags = ["--extra", extra] if extra != "none" else []
            subprocess.run(
                [
                    uv,
                    "sync",
                    "--frozen",
                    "--offline",
                    "--no-dev",
                    "--no-install-project",
                    "--link-mode",
                    "copy",
                    "--quiet",
                ]
                + ["--python", sys.executable, *flags],
                cwd=REPO,
                env=dict(os.environ, UV_PROJECT_ENVIRONMENT=str(venv)),
                check=True,
            )
            files = [p for p in venv.rglob("*") if p.is_file() and not p.is_symlink()]
            packages = len(list(venv.glob("lib/python*/site-packages/*.dist-info")))
            name = "cloudtrain" + ("" if extra == "none" else f"[{extra}]")
            size = numbers.size(sum(p.stat().st_size for p in files))
            print(f"  {name}: {size}, {packages} distributions")
            shutil.rmtree(venv)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    walk = commands.add_parser("walk", help="the call walk of one config through submit")
    walk.add_argument("--config", help="default: job_configs/gpu4.yaml (--dry-run), a small package (--local)")
    walk.add_argument("--local", action="store_true", help="submit --local instead of --dry-run")
    cost = commands.add_parser("dry-run-cost", help="CPU seconds of submit --dry-run above the interpreter")
    cost.add_argument("--config")
    cost.add_argument("--runs", type=int, default=7)
    size = commands.add_parser("install-size", help="install size with one extra against all")
    size.add_argument("--extras", nargs="+", default=["none", "vertex", "sagemaker", "all"])
    args = parser.parse_args()
    return {"walk": show_walk, "dry-run-cost": show_dry_run_cost, "install-size": show_install_size}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
