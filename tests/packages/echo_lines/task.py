"""A user's package that prints the lines it is given and ends, or holds until it is stopped (or until a
file appears). No TensorFlow.

``python -m echo_lines.task [--line TEXT]... [--hold | --until PATH]``
"""

import argparse
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--line", action="append", default=[])
    parser.add_argument("--hold", action="store_true", help="after the lines, wait (up to 10 minutes) to be stopped")
    parser.add_argument("--until", help="after the lines, wait (up to 10 minutes) until this file exists, then end")
    args = parser.parse_args()
    for line in args.line:
        print(line, flush=True)
    if args.hold:
        time.sleep(600)
    deadline = time.monotonic() + 600
    while args.until and not os.path.exists(args.until) and time.monotonic() < deadline:
        time.sleep(0.05)


if __name__ == "__main__":
    main()
