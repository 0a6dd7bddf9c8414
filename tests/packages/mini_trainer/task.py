"""Entry point: `python -m mini_trainer.task --epochs N`."""

import argparse
import json
from pathlib import Path

from mini_trainer.model import step


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args(argv)
    config = json.loads((Path(__file__).parent / "configs" / "default.json").read_text())
    weight = 1.0
    for _ in range(args.epochs):
        weight = step(weight, config["lr"])
    print(f"mini_trainer ok epochs={args.epochs} weight={weight:.4f}")


if __name__ == "__main__":
    main()
