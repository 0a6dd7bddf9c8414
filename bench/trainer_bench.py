"""Throughput of the trainer on this machine, against a plain Keras ``model.fit``.

Four comparisons, each case in its own fresh Python process, cases interleaved (repeat i
of every case runs back to back, so a load drift hits them alike); every case is the median
of ``--repeats`` runs (default 3) with its min-max, every ratio the median of the per-repeat
ratios with its min-max and a verdict (bench/_stats.py: "no measurable difference" when the
two cases' ranges overlap). Examples/s of a training run is the median of its epochs after
the first (the first includes tracing).

1. trainer custom loop vs ``model.compile`` + ``model.fit`` of the same model,
   data, batch and Adam learning rate (constant on both sides), under matched
   conditions: fit is fed the trainer's own cached ``tf.data`` pipeline
   (trainer.data.train_pipeline), both run the same steps per ``tf.function``
   call (``steps_per_execution``), neither uses XLA (the trainer has no XLA;
   Keras's default ``jit_compile="auto"`` would turn it on). What each of the
   trainer's choices is worth is measured separately: the pipeline (fit on it vs
   on NumPy arrays), steps per call (N vs 1, both sides) and XLA (fit with vs
   without). Digits; synthetic 28x28 images too with ``--long``.
2. MirroredStrategy over the CPU split into 2 logical devices vs the default
   strategy (``--benchmark``, same per-replica batch).
3. float32 vs mixed_bfloat16 on the CPU (``--benchmark``; CNN, and ResNet-50
   with ``--long``).
4. What acting on a preemption notice within about a second costs (issue 20): the
   default ``--steps-per-execution auto`` (calls of ~1 s, each wrapped by TensorFlow's
   PreemptionCheckpointHandler) vs one call per epoch, and the notice handler on vs
   off (``--no-preemption-handler``), also with the Vertex path's metadata watcher
   polling a local metadata server. ``bench/preemption_bench.py`` measures what a
   notice then costs.

The default run (~15 minutes on a loaded 2-core CPU) is sized for ``make bench``;
``--long`` adds the expensive cases.

Usage::

    python -m bench.trainer_bench [--quick] [--long] [--calls-only] [--repeats N] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


# --- the baseline: Keras fit under the trainer's conditions, run in a child process ---


def fit_baseline(cfg: dict) -> None:
    """Print one JSON line: per-epoch seconds of ``model.fit`` (training only, no validation).

    ``cfg``: data, epochs, batch, lr, examples, input ("pipeline": the trainer's own cached
    tf.data pipeline from trainer.data.train_pipeline; "numpy": arrays, Keras batches them),
    steps_per_execution, jit (XLA; Keras's own default "auto" turns it on for this model).
    """
    import keras

    from trainer import data as data_lib
    from trainer.models import build_cnn

    keras.utils.set_random_seed(0)
    if cfg["data"] == "digits":
        loaded = data_lib.load_digits(val_split=0.2, seed=0)
    else:
        loaded = data_lib.synthetic((28, 28, 1), 10, cfg["examples"], seed=0)
    model = build_cnn(loaded.input_shape, loaded.num_classes)
    model.compile(
        optimizer=keras.optimizers.Adam(cfg["lr"]),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=cfg["steps_per_execution"],
        jit_compile=cfg["jit"],
    )

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t0 = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t0)

    times: list[float] = []
    batch = cfg["batch"]
    if cfg["input"] == "pipeline":
        steps = loaded.train_examples // batch
        model.fit(
            data_lib.train_pipeline(loaded, batch, 0),
            epochs=cfg["epochs"],
            steps_per_epoch=steps,
            verbose=0,
            callbacks=[Timer()],
        )
        examples = steps * batch
    else:
        x, y = (t.numpy() for t in next(iter(loaded.train.batch(1_000_000))))
        model.fit(x, y, batch_size=batch, epochs=cfg["epochs"], shuffle=True, verbose=0, callbacks=[Timer()])
        examples = int(len(x))
    print(json.dumps({"epoch_seconds": times, "examples_per_epoch": examples}))


# --- running cases --------------------------------------------------------------------


def _env(extra: dict | None = None) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AIP_", "SM_", "TF_CONFIG", "CLUSTER_SPEC", "GCE_METADATA_IP"))
    }
    env.update(PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="2", **(extra or {}))
    return env


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=_env(env), capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith('{"event"')]


def trainer_epochs(args: list[str], workdir: Path, env: dict | None = None) -> float:
    """Median examples/s of the trainer's epochs after the first."""
    out = _run(
        [sys.executable, "-m", "trainer.task", "--no-resume", "--job-dir", str(workdir / "job"), *args], workdir, env
    )
    epochs = [e for e in _events(out) if e["event"] == "epoch"][1:]
    return statistics.median(e["examples_per_sec"] for e in epochs)


def fit_epochs(cfg: dict, workdir: Path) -> float:
    """Median examples/s of ``model.fit``'s epochs after the first (the first includes tracing)."""
    out = _run([sys.executable, __file__, "--_fit", json.dumps(cfg)], workdir)
    result = json.loads(out.strip().splitlines()[-1])
    return statistics.median(result["examples_per_epoch"] / s for s in result["epoch_seconds"][1:])


def trainer_benchmark(args: list[str], workdir: Path) -> dict:
    out = _run([sys.executable, "-m", "trainer.task", "--benchmark", *args], workdir)
    return next(e for e in _events(out) if e["event"] == "benchmark")


# --- 1. trainer vs Keras fit, fair: same input pipeline, same steps per call, no XLA on either side

FIT_DATASETS = (("digits", 32, 0.003), ("synthetic", 64, 0.001))
STEPS_PER_CALL = 20  # both sides; the trainer's data sets here have 44 and 51 steps per epoch


def fit_cases(n: int) -> dict[str, tuple[str, dict]]:
    """Case name -> ("trainer", its extra flags) or ("fit", its config). Same model, data, batch, Adam lr."""
    pipe = {"input": "pipeline", "jit": False}
    return {
        f"trainer, {n} steps/call": ("trainer", {"--steps-per-execution": n}),
        "trainer, 1 step/call": ("trainer", {"--steps-per-execution": 1}),
        f"fit, trainer's pipeline, {n} steps/call, no XLA": ("fit", {**pipe, "steps_per_execution": n}),
        "fit, trainer's pipeline, 1 step/call, no XLA": ("fit", {**pipe, "steps_per_execution": 1}),
        "fit, NumPy arrays, 1 step/call, no XLA": ("fit", {"input": "numpy", "jit": False, "steps_per_execution": 1}),
        f"fit, trainer's pipeline, {n} steps/call, XLA": ("fit", {**pipe, "steps_per_execution": n, "jit": True}),
    }


def fit_ratios(label: str, runs: dict[str, list[float]], n: int) -> dict[str, dict]:
    """The headline ratio (matched conditions) and what each choice is worth, each with its spread."""
    from bench._stats import ratio

    pipe_n, pipe_1 = f"fit, trainer's pipeline, {n} steps/call", "fit, trainer's pipeline, 1 step/call"
    return {
        f"{label}: trainer / fit, same pipeline, {n} steps/call, no XLA": ratio(
            runs[f"trainer, {n} steps/call"], runs[pipe_n + ", no XLA"]
        ),
        f"{label}: trainer / fit, same pipeline, 1 step/call, no XLA": ratio(
            runs["trainer, 1 step/call"], runs[pipe_1 + ", no XLA"]
        ),
        f"{label}: worth of the pipeline: fit on trainer's tf.data / on NumPy arrays (1 step/call, no XLA)": ratio(
            runs[pipe_1 + ", no XLA"], runs["fit, NumPy arrays, 1 step/call, no XLA"]
        ),
        f"{label}: worth of {n} steps/call: trainer {n} / 1": ratio(
            runs[f"trainer, {n} steps/call"], runs["trainer, 1 step/call"]
        ),
        f"{label}: worth of {n} steps/call: fit {n} / 1 (pipeline, no XLA)": ratio(
            runs[pipe_n + ", no XLA"], runs[pipe_1 + ", no XLA"]
        ),
        f"{label}: worth of XLA: fit with / without (pipeline, {n} steps/call)": ratio(
            runs[pipe_n + ", XLA"], runs[pipe_n + ", no XLA"]
        ),
    }


def fit_comparison(
    data: str, batch: int, lr: float, epochs: int, synth_n: int, repeats: int, work: Path, row
) -> dict[str, dict]:
    """Run every case of ``fit_cases`` ``repeats`` times, interleaved, and return the ratios."""
    n = STEPS_PER_CALL
    common = [
        "--data",
        data,
        "--epochs",
        str(epochs),
        "--batch-size",
        str(batch),
        "--lr",
        str(lr),
        "--lr-schedule",
        "constant",
        "--synthetic-examples",
        str(synth_n),
        "--val-split",
        "0.2",
    ]
    fit_cfg = {"data": data, "epochs": epochs, "batch": batch, "lr": lr, "examples": synth_n}
    cases = fit_cases(n)
    runs: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(repeats):  # interleaved: a load drift hits every case alike
        for name, (kind, extra) in cases.items():
            if kind == "trainer":
                flags = [str(x) for kv in extra.items() for x in kv]
                runs[name].append(trainer_epochs(common + flags, work))
            else:
                runs[name].append(fit_epochs({**fit_cfg, **extra}, work))
    label = f"{data} cnn batch {batch}"
    for name, values in runs.items():
        row(f"{label}: {name}", statistics.median(values), runs=values)
    return fit_ratios(data, runs, n)


# --- 4. what acting on a preemption notice within about a second costs -------------------


class _Metadata(http.server.BaseHTTPRequestHandler):
    """A GCE metadata server that answers only ``instance/preempted`` (FALSE): the trainer's
    watcher polls it every second, as on Vertex AI; ``instance/hostname`` is 404, so TensorFlow
    does not take this for a GCE CPU VM and keeps its own handler on (the GPU VM path)."""

    polls = 0  # instance/preempted reads answered: the watcher really ran

    def do_GET(self):
        found = self.path == "/computeMetadata/v1/instance/preempted"
        type(self).polls += found
        self.send_response(200 if found else 404)
        self.end_headers()
        self.wfile.write(b"FALSE" if found else b"")

    def log_message(self, *args):
        pass


def call_cases() -> dict[str, tuple[list[str], bool]]:
    """Case name -> (trainer flags, needs the metadata server). The default is the second."""
    return {
        "one call per epoch, handler on": (["--steps-per-execution", "1000000"], False),
        "bounded calls ~1 s, handler on (default)": ([], False),
        "bounded calls ~1 s, handler off": (["--no-preemption-handler"], False),
        "bounded calls ~1 s, handler on + metadata watcher": ([], True),
    }


def calls_and_handler(quick: bool, repeats: int, work: Path, row) -> dict[str, dict]:
    """The default (``--steps-per-execution auto``: ~1 s calls, each through TensorFlow's
    PreemptionCheckpointHandler) against one call per epoch, and the handler on against off
    (``--no-preemption-handler``), plus the Vertex path's metadata watcher polling a local
    metadata server every second. Small 8x8 images so that an epoch is several calls long and a
    run stays cheap; the smaller the step, the larger a per-call cost shows."""
    from bench._stats import ratio

    n = 2048 if quick else 12288
    common = [
        "--data",
        "synthetic",
        "--input-shape",
        "8,8,1",
        "--synthetic-examples",
        str(n),
        "--epochs",
        "2" if quick else "3",
        "--batch-size",
        "32",
        "--val-split",
        "0.2",
    ]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    metadata = {"GCE_METADATA_IP": f"127.0.0.1:{server.server_address[1]}"}
    cases = call_cases()
    runs: dict[str, list[float]] = {k: [] for k in cases}
    try:
        for _ in range(repeats):  # interleaved, so load drifts hit every case alike
            for name, (extra, watcher) in cases.items():
                runs[name].append(trainer_epochs(common + extra, work, metadata if watcher else None))
    finally:
        server.shutdown()
    for name, values in runs.items():
        polls = {"metadata_polls": _Metadata.polls} if cases[name][1] else {}
        row(f"synthetic {n} 8x8 cnn batch 32: {name}", statistics.median(values), runs=values, **polls)
    default = runs["bounded calls ~1 s, handler on (default)"]
    return {
        "bounded calls ~1 s / one call per epoch (handler on)": ratio(default, runs["one call per epoch, handler on"]),
        "notice handler on / off (bounded calls ~1 s)": ratio(default, runs["bounded calls ~1 s, handler off"]),
        "notice handler + metadata watcher / handler off": ratio(
            runs["bounded calls ~1 s, handler on + metadata watcher"], runs["bounded calls ~1 s, handler off"]
        ),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, one repeat (CI smoke)")
    p.add_argument("--repeats", type=int, help="runs per case (default 3, the fewest that get a verdict; quick 1)")
    p.add_argument(
        "--long",
        action="store_true",
        help="also trainer vs fit on synthetic 28x28 data and ResNet-50 "
        "float32 vs mixed_bfloat16 (on a 2-core CPU that is several times the default's ~15 minutes)",
    )
    p.add_argument("--json", help="also write the results here")
    p.add_argument(
        "--calls-only", action="store_true", help="only section 4 (bounded calls; the notice handler on vs off)"
    )
    p.add_argument("--_fit", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a._fit:
        fit_baseline(json.loads(a._fit))
        return 0

    import tempfile

    from bench._stats import fmt_ratio, ratio

    repeats = a.repeats or (1 if a.quick else 3)
    epochs = 3 if a.quick else 5
    synth_n = 512 if a.quick else 4096
    steps = 5 if a.quick else 30
    rows, comparisons = [], {}
    work = Path(tempfile.mkdtemp(prefix="trainer-bench-"))

    def row(name, value, unit="examples/s", **extra):
        rows.append({"case": name, "value": value, "unit": unit, **extra})
        print(f"  {name:<58} {value:>10.1f} {unit}", flush=True)

    print(
        f"trainer benchmark on {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
        f"(repeats={repeats}, epochs={epochs})",
        flush=True,
    )

    if not a.calls_only:
        # 1. trainer vs model.fit under matched conditions, and what each of the trainer's choices is worth
        datasets = FIT_DATASETS if a.long else FIT_DATASETS[:1]
        for data, batch, lr in datasets:
            comparisons.update(fit_comparison(data, batch, lr, epochs, synth_n, repeats, work, row))

    # 4. bounded calls (a preemption notice acted on within ~1 s) and the notice handler, on vs off
    comparisons.update(calls_and_handler(a.quick, repeats, work, row))

    if not a.calls_only:
        # 2. and 3. --benchmark mode
        base = ["--model", "cnn", "--batch-size", "64", "--benchmark-steps", str(steps)]
        bench_cases = {
            "cnn 28x28 float32, default strategy (1 replica)": base,
            "cnn 28x28 float32, mirrored on 2 logical CPUs": base + ["--cpu-devices", "2"],
            "cnn 28x28 mixed_bfloat16, default strategy": base + ["--precision", "mixed_bfloat16"],
        }
        if a.long:
            rn = ["--model", "resnet50", "--batch-size", "16", "--benchmark-steps", "5", "--warmup-steps", "2"]
            bench_cases["resnet50 224x224 float32"] = rn
            bench_cases["resnet50 224x224 mixed_bfloat16"] = rn + ["--precision", "mixed_bfloat16"]
        results: dict[str, list[float]] = {k: [] for k in bench_cases}
        for _ in range(repeats):
            for name, args in bench_cases.items():
                results[name].append(trainer_benchmark(args, work)["examples_per_sec"])
        med = {k: statistics.median(v) for k, v in results.items()}
        for name, values in results.items():
            row(name, med[name], runs=values)
        names = list(bench_cases)
        comparisons["mirrored 2 logical CPUs / 1"] = ratio(results[names[1]], results[names[0]])
        comparisons["cnn mixed_bfloat16 / float32"] = ratio(results[names[2]], results[names[0]])
        if a.long:
            comparisons["resnet50 mixed_bfloat16 / float32"] = ratio(results[names[4]], results[names[3]])

    print("\n  ratios (median of paired runs, min-max)")
    for name, value in comparisons.items():
        print(f"  {name:<58} {fmt_ratio(value)} {value.get('verdict', '') if isinstance(value, dict) else ''}")
    if a.json:
        from importlib.metadata import version

        Path(a.json).write_text(
            json.dumps(
                {
                    "machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count()},
                    "tensorflow": version("tensorflow"),
                    "quick": a.quick,
                    "long": a.long,
                    "repeats": repeats,
                    "epochs": epochs,
                    "rows": rows,
                    "ratios": comparisons,
                },
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
