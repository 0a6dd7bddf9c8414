"""A user's trainer as the CLI meets it: Keras-style progress bars, TensorFlow's start-up noise
on stderr, argparse, a chosen exit code, a long sleep. No TensorFlow (fast to run).

``python -m chatty_trainer.task [--epochs N] [--exit CODE] [--sleep S] [--stubborn]``

``--stubborn``: a SIGTERM is answered with a line and otherwise ignored, as a trainer whose
checkpoint save hangs: only SIGKILL ends it.
"""

import argparse
import json
import os
import signal
import sys
import time

NOISE = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1732350000.463277   23681 cudart_stub.cc:31] Could not find cuda drivers on your machine, "
    "GPU will not be used.",
    "E0000 00:00:1732350000.992844   23681 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: "
    "Failed call to cuInit: UNKNOWN ERROR (303)",
]


def replica() -> str:
    task = json.loads(os.environ.get("TF_CONFIG") or "{}").get("task")
    return "chief" if not task or task["type"] == "chief" else f"worker-{task['index']}"


def progress_bar(epoch: int, steps: int = 3) -> None:
    """What Keras' fit(verbose=1) writes: bold/green ANSI bars redrawn with backspaces and \\r."""
    width = 0
    for step in range(1, steps + 1):
        bar = f"\x1b[1m{step}/{steps}\x1b[0m \x1b[32m{'━' * step}\x1b[0m - loss: {1.0 / (epoch + step):.4f}"
        sys.stdout.write("\b" * width + "\r" + bar)
        sys.stdout.flush()
        width = len(bar)
    sys.stdout.write("\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--stubborn", action="store_true")
    args = parser.parse_args()
    name = replica()
    if args.stubborn:
        signal.signal(signal.SIGTERM, lambda *_: print(f"{name}: SIGTERM; still saving", flush=True))
    for line in NOISE:
        print(line, file=sys.stderr, flush=True)
    print(f"W0000 00:00:1732350001.000000   23681 real.cc:1] a real warning from {name}", file=sys.stderr, flush=True)
    for epoch in range(1, args.epochs + 1):
        print(f"Epoch {epoch}/{args.epochs} on {name}", flush=True)
        progress_bar(epoch)
        time.sleep(0.3)  # the replicas' lines interleave in time
    time.sleep(args.sleep)
    sys.exit(args.exit)


if __name__ == "__main__":
    main()
