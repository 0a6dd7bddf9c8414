"""A user's own trainer that prints what Keras and TensorFlow print, and its own event lines in the
format the docs give — written as a user writes it: no ``epochs`` in the epoch event (it is in
``--epochs``), the sweep metric reported after the epoch, a Keras bar half drawn when TensorFlow
warns on stderr. No TensorFlow (fast to run).

``python -m keras_events.task [--epochs N]``
"""

import argparse
import json
import sys


def event(**fields) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    for epoch in range(1, args.epochs + 1):
        sys.stdout.write(f"\r1/3 \x1b[32m━\x1b[0m - loss: {1 / epoch:.4f}")  # Keras draws the bar…
        sys.stdout.flush()
        # …and TensorFlow warns on stderr before the bar's line ends
        print(f"W0000 00:00:1732350001.000000   23681 loop_optimizer.cc:933] warning in epoch {epoch}",
              file=sys.stderr, flush=True)  # fmt: skip
        sys.stdout.write(f"\r3/3 \x1b[32m━━━\x1b[0m - loss: {0.5 / epoch:.4f}\n")
        sys.stdout.flush()
        val_accuracy = 0.5 + epoch / 10 + 1e-9
        event(event="epoch", epoch=epoch, loss=0.5 / epoch, val_accuracy=val_accuracy)
        event(event="metric", name="val_accuracy", value=val_accuracy, step=epoch)  # what trainer/metrics does
        event(event="metric", name="val_auc", value=0.812345678 + epoch / 100, step=epoch)


if __name__ == "__main__":
    main()
