"""A user's training script for a sweep, no TensorFlow: it takes ``--lr`` and prints its score the
way a trainer reports a metric (one ``{"event": "metric"}`` JSON line), best at lr = 0.01.

``python -m sweep_score.task --lr=0.003 [--hold-file PATH] [--print-env NAME]``: ``ENV NAME=value`` first
(a secret's value reaches the trial: the tests check it shows masked); while PATH exists it waits first
(up to 10 minutes), so a test can stop the sweep in the middle of a trial. A number N in PATH lets N
trials pass first, one each (trials run one at a time), so a test can stop the sweep in a later one.
"""

import argparse
import json
import math
import os
import time


def hold(path: str) -> None:
    """Wait while ``path`` exists, unless it still has a pass for this trial (a number above 0)."""
    if os.path.exists(path):
        with open(path) as file:
            passes = int(file.read().strip() or 0)
        if passes > 0:
            with open(path, "w") as file:
                file.write(str(passes - 1))
            return
    deadline = time.monotonic() + 600
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--hold-file")
    parser.add_argument("--print-env", action="append", default=[])
    args, _ = parser.parse_known_args()
    for name in args.print_env:
        print(f"ENV {name}={os.environ.get(name, '')}", flush=True)
    print(f"training with lr={args.lr}", flush=True)
    if args.hold_file:
        hold(args.hold_file)
    score = -((math.log10(args.lr) + 2) ** 2)
    print(json.dumps({"event": "metric", "name": "score", "value": score, "step": 1}), flush=True)


if __name__ == "__main__":
    main()
