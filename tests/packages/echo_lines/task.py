"""A user's package that prints the lines it is given and ends, or holds until it is stopped. No TensorFlow.

``python -m echo_lines.task [--line TEXT]... [--hold]``
"""

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--line", action="append", default=[])
    parser.add_argument("--hold", action="store_true", help="after the lines, wait (up to 10 minutes) to be stopped")
    args = parser.parse_args()
    for line in args.line:
        print(line, flush=True)
    if args.hold:
        time.sleep(600)


if __name__ == "__main__":
    main()
