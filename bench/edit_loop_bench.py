"""The edit–run loop of a user's own package under ``--local``: what one code-only edit costs (issue 40).

The project is a copy of the tutorial's (``docs/tutorial/my-project``: Keras, a data channel) with one
requirement the image does not ship (``ct-loop-dep``, served by a package index on 127.0.0.1,
``tests/fakes/package_index.py``), so its environment has a requirements layer that needed the index.
A first run builds that layer with the index up. Then the index is stopped: its port refuses every
connection, with ``PIP_INDEX_URL`` still naming it (the network is cut, the settings unchanged). Each
repeat then runs, interleaved:

* **no edit**: the same code again: every layer is reused;
* **code edit**: one line of ``trainer/task.py`` changed: only the package's own layer is built
  (``pip install --no-deps --no-index`` of the new sdist), offline.

Each run is ``cloudtrain submit --config job.yaml --local`` in a fresh process (``--epochs=2``); its
time is from the process's start to the first training line it prints (the first epoch line), after
which it is stopped (Ctrl-C). The figure is the median (min–max) of the repeats; "edit costs" is the
median of the paired differences (edit − the no-edit run just before it). Target: ≤ 2 s more, and
every edit succeeds with the index cut. Exit 1 when a run failed.

The image layer (Python 3.10 + TensorFlow 2.17) is the tests' (``$CLOUDTRAIN_TEST_ENV_CACHE``, default
``~/.cache/cloudtrain-test-envs``): built once per machine, from uv's cache when it has the wheels.

Usage::

    python -m bench.edit_loop_bench [--quick] [--repeats N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench._stats import spread  # noqa: E402
from tests.fakes.package_index import PackageIndex  # noqa: E402

PROJECT = REPO / "docs" / "tutorial" / "my-project"
TARGET_S = 2.0
FIRST_TRAINING_LINE = re.compile(r'epoch 1/|"event": "epoch"')
PACKAGE_LAYER = re.compile(r"the package's code installed in ([0-9.]+) s")


def _project(work: Path) -> Path:
    """The tutorial's project with one requirement from the index (imported by its task module)."""
    project = work / "my-project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "trainer" / "requirements.txt").write_text("ct-loop-dep==1.0\n")
    task = project / "trainer" / "task.py"
    task.write_text(
        task.read_text().replace("import numpy as np\n", "import ct_loop_dep  # noqa: F401\nimport numpy as np\n")
    )
    return project


def _edit(project: Path, n: int) -> None:
    """One line of the task module changed: what a user does between two runs."""
    task = project / "trainer" / "task.py"
    lines = [line for line in task.read_text().splitlines() if not line.startswith("EDIT = ")]
    task.write_text("\n".join([*lines, f"EDIT = {n}"]) + "\n")


def _cache(work: Path) -> Path:
    """A cache of its own (history, packages) whose ``envs`` is the tests' env cache (the image layer)."""
    envs = Path(os.environ.get("CLOUDTRAIN_TEST_ENV_CACHE") or Path.home() / ".cache" / "cloudtrain-test-envs") / "envs"
    envs.mkdir(parents=True, exist_ok=True)
    cache = work / "cache"
    cache.mkdir()
    (cache / "envs").symlink_to(envs, target_is_directory=True)
    return cache


def one_run(project: Path, cache: Path, index_url: str, out: Path, timeout: float = 600) -> dict:
    """``cloudtrain submit --local`` until its first training line; then Ctrl-C. Seconds and what it said."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "SM_", "TF_CONFIG", "CLUSTER_SPEC"))}
    env.update(CLOUDTRAIN_CACHE_DIR=str(cache), PIP_INDEX_URL=index_url, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "cloudtrain", "submit", "--config", str(project / "job.yaml"), "--local"]
    cmd += ["--set", "args=[--epochs=2]", "--set", f"output_dir={out}"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    seconds, seen = None, []
    deadline = start + timeout
    for line in proc.stdout:
        seen.append(line.rstrip("\n"))
        if FIRST_TRAINING_LINE.search(line):
            seconds = time.perf_counter() - start
            proc.send_signal(signal.SIGINT)  # a local run stops on Ctrl-C
            break
        if time.perf_counter() > deadline:
            break
    try:
        rest, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, _ = proc.communicate()
    seen += rest.splitlines()
    layer = next((float(m[1]) for line in seen if (m := PACKAGE_LAYER.search(line))), None)
    return {
        "seconds": None if seconds is None else round(seconds, 3),
        "package_layer_s": layer,
        "reused": any("(reused)" in line for line in seen),
        "tail": seen[-6:] if seconds is None else [],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="two repeats")
    p.add_argument("--repeats", type=int, help="pairs of runs, no edit then code edit (default 5, quick 2)")
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args(argv)
    repeats = a.repeats or (2 if a.quick else 5)
    work = Path(tempfile.mkdtemp(prefix="edit-loop-bench-"))
    project, cache = _project(work), _cache(work)
    index = PackageIndex(work / "index")
    index.add("ct-loop-dep", "1.0", "__version__ = '1.0'\n")
    print(f"edit-loop benchmark: {repeats} pairs; work folder {work}", flush=True)
    first = one_run(project, cache, index.url, work / "run-first")  # builds the requirements layer, index up
    print(f"  first run (index up): {first}", flush=True)
    index.stop()  # the network is cut: the same index URL now refuses every connection
    warm = one_run(project, cache, index.url, work / "run-warm")  # the no-edit baseline is warm from here on
    print(f"  warm-up, no edit (index cut): {warm}", flush=True)
    same, edited = [], []
    for i in range(repeats):
        same.append(one_run(project, cache, index.url, work / f"run-{i}-same"))
        _edit(project, i)
        edited.append(one_run(project, cache, index.url, work / f"run-{i}-edit"))
        print(f"  #{i + 1}: no edit {same[-1]}, code edit {edited[-1]}", flush=True)
    ok = all(r["seconds"] is not None for r in [first, warm, *same, *edited])
    data: dict = {"repeats": repeats, "target_s": TARGET_S, "first_run": first, "all_succeeded": ok}
    if ok:
        no_edit = [r["seconds"] for r in same]
        edit = [r["seconds"] for r in edited]
        extra = [e - s for e, s in zip(edit, no_edit, strict=True)]
        layers = [r["package_layer_s"] for r in edited if r["package_layer_s"] is not None]
        data.update(
            no_edit_s=spread(no_edit),
            edit_s=spread(edit),
            extra_s=spread(extra),
            package_layer_s=spread(layers) if layers else None,
            met=statistics.median(extra) <= TARGET_S,
            no_edit_reused=all(r["reused"] for r in same),
        )
        print(
            f"  no edit {statistics.median(no_edit):.2f} s, code edit {statistics.median(edit):.2f} s: "
            f"the edit costs {statistics.median(extra):+.2f} s (target ≤ {TARGET_S:g} s)",
            flush=True,
        )
    if a.json:
        Path(a.json).write_text(json.dumps(data, indent=2) + "\n")
    shutil.rmtree(work / "index", ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
