"""Throughput of the trainer on this machine, against a plain Keras ``model.fit``.

Three comparisons, each case in its own fresh Python process:

1. trainer custom loop vs a hand-written ``model.compile`` + ``model.fit`` of
   the same model, data and batch (digits, the default run; and synthetic
   28x28 MNIST-shaped images, where compute dominates). Examples/s over the
   epochs after the first (the first includes tracing); median of the epochs,
   then median of ``--repeats`` runs, cases interleaved so load drifts hit
   both sides alike.
2. MirroredStrategy over the CPU split into 2 logical devices vs the default
   strategy (``--benchmark``, same per-replica batch).
3. float32 vs mixed_bfloat16 on the CPU (``--benchmark``; CNN, and ResNet-50
   unless ``--quick``).
4. The cost of acting on a preemption notice within about a second: the default
   ``--steps-per-execution auto`` (calls of ~1 s, each wrapped by TensorFlow's
   PreemptionCheckpointHandler; also at 0.25 s) vs one call per epoch, on synthetic
   data where an epoch takes several seconds (median and every run's value).
   ``bench/preemption_bench.py`` measures what a notice then costs.

Usage::

    python bench/trainer_bench.py [--quick] [--repeats N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


# --- the baseline: plain Keras fit, run in a child process --------------------------

def fit_baseline(data: str, epochs: int, batch: int, lr: float, examples: int) -> None:
    """Print one JSON line: per-epoch seconds of ``model.fit`` (training only, no validation)."""
    import keras

    from trainer import data as data_lib
    from trainer.models import build_cnn

    keras.utils.set_random_seed(0)
    if data == "digits":
        loaded = data_lib.load_digits(val_split=0.2, seed=0)
    else:
        loaded = data_lib.synthetic((28, 28, 1), 10, examples, seed=0)
    x, y = (t.numpy() for t in next(iter(loaded.train.batch(1_000_000))))
    model = build_cnn(loaded.input_shape, loaded.num_classes)
    model.compile(optimizer=keras.optimizers.Adam(lr), loss="sparse_categorical_crossentropy", metrics=["accuracy"])

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t0 = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t0)

    times: list[float] = []
    model.fit(x, y, batch_size=batch, epochs=epochs, shuffle=True, verbose=0, callbacks=[Timer()])
    print(json.dumps({"epoch_seconds": times, "examples_per_epoch": int(len(x))}))


# --- running cases --------------------------------------------------------------------

def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "SM_", "TF_CONFIG", "CLUSTER_SPEC"))}
    env.update(PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="2")
    return env


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith('{"event"')]


def trainer_epochs(args: list[str], workdir: Path) -> float:
    """Median examples/s of the trainer's epochs after the first."""
    out = _run([sys.executable, "-m", "trainer.task", "--no-resume", "--job-dir", str(workdir / "job"), *args], workdir)
    epochs = [e for e in _events(out) if e["event"] == "epoch"][1:]
    return statistics.median(e["examples_per_sec"] for e in epochs)


def fit_epochs(data: str, epochs: int, batch: int, lr: float, examples: int, workdir: Path) -> float:
    out = _run([sys.executable, __file__, "--_fit", data, str(epochs), str(batch), str(lr), str(examples)], workdir)
    result = json.loads(out.strip().splitlines()[-1])
    return statistics.median(result["examples_per_epoch"] / s for s in result["epoch_seconds"][1:])


def trainer_benchmark(args: list[str], workdir: Path) -> dict:
    out = _run([sys.executable, "-m", "trainer.task", "--benchmark", *args], workdir)
    return next(e for e in _events(out) if e["event"] == "benchmark")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, one repeat, no ResNet-50 (CI smoke)")
    p.add_argument("--repeats", type=int, help="runs per case (default 3, quick 1)")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--calls-only", action="store_true", help="only section 4 (bounded calls vs one per epoch)")
    p.add_argument("--_fit", nargs=5, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a._fit:
        data, epochs, batch, lr, examples = a._fit
        fit_baseline(data, int(epochs), int(batch), float(lr), int(examples))
        return 0

    import tempfile

    repeats = a.repeats or (1 if a.quick else 3)
    epochs = 3 if a.quick else 8
    synth_n = 512 if a.quick else 4096
    steps = 5 if a.quick else 30
    rows, comparisons = [], {}
    work = Path(tempfile.mkdtemp(prefix="trainer-bench-"))

    def row(name, value, unit="examples/s", **extra):
        rows.append({"case": name, "value": value, "unit": unit, **extra})
        print(f"  {name:<58} {value:>10.1f} {unit}", flush=True)

    print(f"trainer benchmark on {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
          f"(repeats={repeats}, epochs={epochs})", flush=True)

    if not a.calls_only:
        # 1. trainer vs model.fit
        fit_cases = [("digits", 32, 0.003, 0), ("synthetic", 64, 0.001, synth_n)]
        for data, batch, lr, n in fit_cases:
            common = ["--data", data, "--epochs", str(epochs), "--batch-size", str(batch), "--lr", str(lr),
                      "--synthetic-examples", str(max(n, 1)), "--val-split", "0.2"]
            loop, loop1, fit = [], [], []
            for _ in range(repeats):
                loop.append(trainer_epochs(common, work))
                if data == "digits":
                    loop1.append(trainer_epochs(common + ["--steps-per-execution", "1"], work))
                fit.append(fit_epochs(data, epochs, batch, lr, n, work))
            label = f"{data} cnn batch {batch}"
            row(f"{label}: trainer custom loop", statistics.median(loop), runs=loop)
            if loop1:
                row(f"{label}: trainer, 1 step per tf.function call", statistics.median(loop1), runs=loop1)
            row(f"{label}: plain keras model.fit", statistics.median(fit), runs=fit)
            comparisons[f"{data}: trainer / fit"] = statistics.median(loop) / statistics.median(fit)
            if loop1:
                comparisons[f"{data}: trainer (1 step/call) / fit"] = statistics.median(loop1) / statistics.median(fit)

    # 4. bounded calls (preemption notice within ~1 s) vs one tf.function call per epoch
    n4 = 2048 if a.quick else 16384
    common = ["--data", "synthetic", "--synthetic-examples", str(n4), "--epochs", str(min(epochs, 4)),
              "--batch-size", "64", "--val-split", "0.2"]
    cases4 = {"one call per epoch": ["--steps-per-execution", "1000000"],
              "auto, ~1 s per call (default)": [],
              "auto, ~0.25 s per call": ["--call-seconds", "0.25"]}
    runs4: dict[str, list[float]] = {k: [] for k in cases4}
    for _ in range(repeats):  # interleaved, so load drifts hit every case alike
        for name, extra in cases4.items():
            runs4[name].append(trainer_epochs(common + extra, work))
    for name, values in runs4.items():
        row(f"synthetic {n4} cnn batch 64: {name}", statistics.median(values), runs=values)
    med4 = {k: statistics.median(v) for k, v in runs4.items()}
    comparisons["bounded calls ~1 s / one call per epoch"] = med4["auto, ~1 s per call (default)"] / med4[
        "one call per epoch"]
    comparisons["bounded calls ~0.25 s / one call per epoch"] = med4["auto, ~0.25 s per call"] / med4[
        "one call per epoch"]

    if not a.calls_only:
        # 2. and 3. --benchmark mode
        base = ["--model", "cnn", "--batch-size", "64", "--benchmark-steps", str(steps)]
        bench_cases = {
            "cnn 28x28 float32, default strategy (1 replica)": base,
            "cnn 28x28 float32, mirrored on 2 logical CPUs": base + ["--cpu-devices", "2"],
            "cnn 28x28 mixed_bfloat16, default strategy": base + ["--precision", "mixed_bfloat16"],
        }
        if not a.quick:
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
        comparisons["mirrored 2 logical CPUs / 1"] = med[names[1]] / med[names[0]]
        comparisons["cnn mixed_bfloat16 / float32"] = med[names[2]] / med[names[0]]
        if not a.quick:
            comparisons["resnet50 mixed_bfloat16 / float32"] = med[names[4]] / med[names[3]]

    print("\n  ratios")
    for name, value in comparisons.items():
        print(f"  {name:<58} {value:>10.2f}x")
    if a.json:
        from importlib.metadata import version

        Path(a.json).write_text(json.dumps({
            "machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count()},
            "tensorflow": version("tensorflow"), "quick": a.quick, "repeats": repeats, "epochs": epochs,
            "rows": rows, "ratios": comparisons,
        }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
