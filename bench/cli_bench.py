"""CLI latency: `cloudtrain --help`, `validate`, `submit --dry-run`, next to the import cost
of what a user would otherwise script with (the Vertex SDK, the SageMaker SDK's core).

Each command runs in a fresh process (what a user waits for); the median of N runs. The
dry-run is also timed as the first run after an install: each run with an empty bytecode
cache (``PYTHONPYCACHEPREFIX`` pointing at a new folder, so every module is compiled from
source: an install without bytecode compilation), and with that folder holding the bytecode
that ``make install`` compiles (``tools/startup_bytecode.py``: cloudtrain and its light
dependencies, not TensorFlow's and the SDKs'), a step that is timed too. Rows also carry CPU
time (user + system), which a busy machine disturbs less than wall time.
    python -m bench.cli_bench [--runs 7] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "cloudtrain"]
CASES = {
    "cloudtrain --help": CLI + ["--help"],
    "cloudtrain validate gpu4.yaml": CLI + ["validate", "job_configs/gpu4.yaml"],
    "cloudtrain submit --dry-run (vertex)": CLI + ["submit", "--config", "job_configs/gpu4.yaml", "--dry-run"],
    "cloudtrain submit --dry-run (sagemaker)": CLI
    + ["submit", "--config", "job_configs/sagemaker-gpu4.yaml", "--dry-run"],
    "python -c 'import google.cloud.aiplatform'": [sys.executable, "-c", "import google.cloud.aiplatform"],
    "python -c 'from google.cloud import aiplatform_v1'": [
        sys.executable,
        "-c",
        "from google.cloud import aiplatform_v1",
    ],
    "python -c 'from sagemaker.core import image_uris'": [
        sys.executable,
        "-c",
        "from sagemaker.core import image_uris",
    ],
    "python -c 'pass' (interpreter start)": [sys.executable, "-c", "pass"],
}


DRY_RUN = "cloudtrain submit --dry-run (vertex)"
DRY_RUNS = (DRY_RUN, "cloudtrain submit --dry-run (sagemaker)")
FIRST_NO_BYTECODE = f"{DRY_RUN}, first run, no bytecode"
FIRST_COMPILED = f"{DRY_RUN}, first run, bytecode compiled at install"
INSTALL_STEP = "make install's bytecode step (tools/startup_bytecode.py)"
STARTUP_BYTECODE = [sys.executable, str(REPO / "tools" / "startup_bytecode.py")]


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    return {
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "max_s": max(walls),
        "runs": len(samples),
        "cpu_median_s": statistics.median(cpus),
        "cpu_min_s": min(cpus),
    }


def time_command(argv: list[str], runs: int, env: dict[str, str]) -> dict[str, float]:
    """Warm runs: the page cache warmed, and the bytecode of cloudtrain's own (editable) modules written by a
    first run, as any run after the first finds it; a ``PYTHONDONTWRITEBYTECODE`` in the caller's environment
    would otherwise make every timed run compile them again."""
    first = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, cwd=REPO, env=first, capture_output=True, check=True)
    return _summary([_run(argv, env) for _ in range(runs)])


def imported_sources(argv: list[str], env: dict[str, str]) -> list[str]:
    """The .py files a ``python -m cloudtrain …`` run imports."""
    probe = (
        "import atexit, json, runpy, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted({m.__file__ for m in list(sys.modules.values())"
        " if (getattr(m, '__file__', None) or '').endswith('.py')})), file=sys.stderr))\n"
        "sys.argv = ['cloudtrain', *sys.argv[1:]]\nrunpy.run_module('cloudtrain', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, *argv[3:]], cwd=REPO, env=env, capture_output=True, text=True)
    return json.loads(done.stderr.strip().splitlines()[-1])


#: py_compile of the files named in argv, where the interpreter would look for their bytecode.
_COMPILE_FILES = (
    "import importlib.util, py_compile, sys\nfor f in sys.argv[1:]:\n"
    "    py_compile.compile(f, cfile=importlib.util.cache_from_source(f))\n"
)


def _stdlib_sources(sources: list[str]) -> list[str]:
    """The standard library's share of ``sources``: its bytecode comes with the interpreter's own install
    (a new ``PYTHONPYCACHEPREFIX`` hides it, so the bench writes it there, as it was before)."""
    import sysconfig

    stdlib = sysconfig.get_paths()["stdlib"]
    return [f for f in sources if f.startswith(stdlib) and "site-packages" not in f]


def time_first_run(
    argv: list[str], runs: int, env: dict[str, str], *, compiled: bool
) -> tuple[dict[str, float], dict[str, float] | None]:
    """Each run with its own new bytecode cache: empty, or holding what ``make install`` compiles
    (that step timed too: the second summary)."""
    stdlib = _stdlib_sources(imported_sources(argv, env)) if compiled else []
    samples, steps = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as prefix:
            run_env = {**env, "PYTHONPYCACHEPREFIX": prefix}
            if compiled:
                steps.append(_run(STARTUP_BYTECODE, run_env))
                subprocess.run([sys.executable, "-c", _COMPILE_FILES, *stdlib], env=run_env, check=True)
            samples.append(_run(argv, run_env))
    return _summary(samples), (_summary(steps) if steps else None)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 runs, cloudtrain commands only")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    runs = 3 if args.quick else max(5, args.runs)
    cases = {k: v for k, v in CASES.items() if not args.quick or k.startswith("cloudtrain") or "interpreter" in k}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": cache}
        results = {name: time_command(cmd, runs, env) for name, cmd in cases.items()}
        results[FIRST_NO_BYTECODE], _ = time_first_run(CASES[DRY_RUN], runs, env, compiled=False)
        results[FIRST_COMPILED], install = time_first_run(CASES[DRY_RUN], runs, env, compiled=True)
        assert install is not None  # compiled=True times the install step on every run
        results[INSTALL_STEP] = install
    for name, r in results.items():
        print(
            f"{name:<70} median {r['median_s'] * 1000:7.0f} ms  (min {r['min_s'] * 1000:.0f}, "
            f"max {r['max_s'] * 1000:.0f}, n={r['runs']}), CPU median {r['cpu_median_s'] * 1000:.0f} ms"
        )
    warm, first = results[DRY_RUN]["cpu_median_s"], results[FIRST_COMPILED]["cpu_median_s"]
    bare = results.get("python -c 'pass' (interpreter start)", {}).get("cpu_median_s")
    above = (
        ", ".join(
            f"{name.split('(')[1].rstrip(')')} {(results[name]['cpu_median_s'] - bare) * 1000:.0f} ms"
            for name in DRY_RUNS
            if name in results
        )
        if bare
        else ""
    )
    first_wall = results[FIRST_COMPILED]["median_s"] / results[DRY_RUN]["median_s"]
    print(
        f"first run after install / warm: {first / warm:.2f} (CPU), {first_wall:.2f} (wall)"
        + (f"; warm dry-run above the bare interpreter (CPU): {above}" if above else "")
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
