"""The bundled trainer under the clouds' real TensorFlow / Python pairs.

    python -m bench.compat [--only vertex-default,...] [--out docs/compat.md] [--cache DIR]

Each row runs ``cloudtrain submit --local`` on ``job_configs/cpu.yaml`` with the row's
``image.tensorflow`` and ``local.python``: a fresh local environment of that Python with that
TensorFlow (plus what the image ships) and **only the trainer's sdist** installed on top, then
2 epochs on digits, the export, and a reload of the export in the same environment (the
SavedModel's ``serve`` signature and ``model.keras``, no trainer code, no strategy; their
predictions must agree). One more row trains with 2 workers (MultiWorkerMirroredStrategy over
``TF_CONFIG``) on the Vertex default. A Python this machine lacks is skipped with one line.

This is a development check: the first run downloads each TensorFlow from the package index
(not part of the offline promise). Results go to ``docs/compat.md`` as a table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "job_configs" / "cpu.yaml"

RELOAD = r"""
import json, os, sys
import numpy as np
import tensorflow as tf
import keras
from sklearn.datasets import load_digits

model_dir = sys.argv[1]
x = (load_digits().images[:64] / 16.0).astype("float32")[..., None]
saved = next(os.path.join(r, "") for r, _, files in os.walk(model_dir) if "saved_model.pb" in files)
served = tf.saved_model.load(saved).signatures["serving_default"]
out = list(served(tf.constant(x)).values())[0].numpy()
k = keras.saving.load_model(os.path.join(model_dir, "model.keras")).predict(x, verbose=0)
print(json.dumps({"tensorflow": tf.__version__, "keras": keras.__version__, "python": sys.version.split()[0],
                  "agree": float(np.mean(out.argmax(-1) == k.argmax(-1))), "max_diff": float(np.abs(out - k).max())}))
"""


@dataclass(frozen=True)
class Row:
    name: str
    cloud: str
    python: str
    tensorflow: str
    replicas: int = 1
    why: str = ""


def rows() -> list[Row]:
    from cloudtrain import catalog

    sm_newest = catalog.default_tensorflow("sagemaker")
    vx = catalog.default_tensorflow("vertex")
    vx_py = catalog.image_pythons("vertex", vx)[-1]
    sm_py = catalog.image_pythons("sagemaker", sm_newest)[-1]
    return [
        Row("vertex-2.16", "vertex", "3.10", "2.16", why="oldest TF the trainer supports"),
        Row("vertex-default", "vertex", vx_py, vx, why="Vertex's newest image"),
        Row("sagemaker-newest", "sagemaker", sm_py, sm_newest, why="SageMaker's newest image"),
        Row("vertex-default-mwms", "vertex", vx_py, vx, replicas=2, why="2 workers, MultiWorkerMirroredStrategy"),
    ]


@dataclass
class Result:
    row: Row
    status: str  # ok | failed | skipped
    detail: str = ""
    numbers: dict = field(default_factory=dict)


def run_row(row: Row, *, cache: Path | None = None, work: Path | None = None, timeout_s: int = 1200) -> Result:
    """Train, export and reload in a fresh environment for ``row``; never raises for a failed check."""
    from cloudtrain.backends.runner.interpreters import find_python

    if find_python(row.python) is None:
        return Result(row, "skipped", f"no Python {row.python} on this machine (PATH, ~/.pyenv/versions)")
    work = Path(work or tempfile.mkdtemp(prefix=f"compat-{row.name}-"))
    out = work / "run"
    args = "[--data=digits, --epochs=2, --batch-size=32]"
    cmd = [
        sys.executable,
        "-m",
        "cloudtrain",
        "submit",
        "--config",
        str(CONFIG),
        "--local",
        "--set",
        f'image.tensorflow="{row.tensorflow}"',
        "--set",
        f'local.python="{row.python}"',
        "--set",
        f"replica_count={row.replicas}",
        "--set",
        f"args={args}",
        "--set",
        f"output_dir={out}",
    ]
    if row.cloud == "sagemaker":
        cmd += [
            "--set",
            "backend=local",
            "--set",
            "target=sagemaker",
            "--set",
            "region=us-east-1",
            "--set",
            "machine.type=ml.m5.xlarge",
            "--set",
            "role_arn=arn:aws:iam::123456789012:role/x",
            "--set",
            "staging_bucket=s3://b",
            "--set",
            "project=null",
        ]
    env = dict(os.environ)
    if cache:
        env["CLOUDTRAIN_CACHE_DIR"] = str(cache)
    start = time.monotonic()
    run = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout_s)
    wall = time.monotonic() - start
    log = run.stdout + run.stderr
    (work / "submit.log").write_text(log)
    if run.returncode != 0:
        last = [line for line in log.splitlines() if line.strip()][-3:]
        return Result(row, "failed", f"training exited {run.returncode}: {' | '.join(last)[-300:]}", {"wall_s": wall})
    status = json.loads((out / "local-run" / "status.json").read_text())["details"]
    model_dir = status["model_dir"]
    python = Path(status["environment"]) / "bin" / "python"
    reload = subprocess.run([str(python), "-c", RELOAD, model_dir], capture_output=True, text=True, timeout=300)
    if reload.returncode != 0:
        return Result(row, "failed", f"reload failed: {(reload.stderr.strip().splitlines() or ['?'])[-1]}")
    got = json.loads(reload.stdout.strip().splitlines()[-1])
    numbers = {
        **got,
        "wall_s": round(wall, 1),
        "val_accuracy": status["metrics"].get("val_accuracy"),
        "epochs": status["metrics"].get("epochs_run"),
        "replicas": len(status["exit_codes"]),
    }
    if got["agree"] < 1.0:
        return Result(
            row, "failed", f"SavedModel and model.keras disagree on {1 - got['agree']:.0%} of inputs", numbers
        )
    return Result(row, "ok", "", numbers)


def render(results: list[Result]) -> str:
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# The trainer under the clouds' TensorFlow / Python pairs",
        "",
        f"`python -m bench.compat` on {when}: each row is `cloudtrain submit --local` of `job_configs/cpu.yaml`",
        "with that `image.tensorflow` and `local.python`, so a fresh environment holds that TensorFlow (plus",
        "TensorBoard, as the images ship it) and only the trainer's sdist; 2 epochs on digits, the export, then",
        "the SavedModel (`serving_default`) and `model.keras` reloaded there without trainer code and compared.",
        "CI runs the Vertex default row as a slow test (`tests/compat/`).",
        "",
        "| row | why | Python | TensorFlow | Keras | replicas | val accuracy | reload agrees | wall s | result |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        n = r.numbers
        acc = f"{n['val_accuracy']:.3f}" if isinstance(n.get("val_accuracy"), (int, float)) else "-"
        agree = f"{n['agree']:.0%} (max diff {n['max_diff']:.1e})" if "agree" in n else "-"
        result = r.status + (f": {r.detail}" if r.detail else "")
        lines.append(
            f"| {r.row.name} | {r.row.why} | {n.get('python', r.row.python)} | {n.get('tensorflow', r.row.tensorflow)}"
            f" | {n.get('keras', '-')} | {n.get('replicas', r.row.replicas)} | {acc} | {agree}"
            f" | {n.get('wall_s', '-')} | {result} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compat", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated row names")
    parser.add_argument("--out", default=str(REPO / "docs" / "compat.md"))
    parser.add_argument("--cache", help="env cache dir (default: cloudtrain's)")
    args = parser.parse_args(argv)
    chosen = [r for r in rows() if not args.only or r.name in args.only.split(",")]
    results = []
    for row in chosen:
        print(
            f"compat: {row.name} (Python {row.python}, TensorFlow {row.tensorflow}, {row.replicas} replica(s))…",
            flush=True,
        )
        result = run_row(row, cache=Path(args.cache) if args.cache else None)
        print(f"compat: {row.name}: {result.status} {result.detail} {json.dumps(result.numbers)}", flush=True)
        results.append(result)
    Path(args.out).write_text(render(results))
    print(f"wrote {args.out}")
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
