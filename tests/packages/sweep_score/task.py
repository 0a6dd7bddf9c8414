"""A user's training script for a sweep, no TensorFlow: it takes ``--lr`` and prints its score the
way a trainer reports a metric (one ``{"event": "metric"}`` JSON line), best at lr = 0.01.

``python -m sweep_score.task --lr=0.003 [--hold-file PATH]``: while PATH exists it waits first
(up to 10 minutes), so a test can stop the sweep in the middle of a trial.
"""

import argparse
import json
import math
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--hold-file")
    args, _ = parser.parse_known_args()
    print(f"training with lr={args.lr}", flush=True)
    deadline = time.monotonic() + 600
    while args.hold_file and os.path.exists(args.hold_file) and time.monotonic() < deadline:
        time.sleep(0.2)
    score = -((math.log10(args.lr) + 2) ** 2)
    print(json.dumps({"event": "metric", "name": "score", "value": score, "step": 1}), flush=True)


if __name__ == "__main__":
    main()
