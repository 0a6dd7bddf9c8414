"""A user's package as it runs on Slurm: prints what the contract gave it, then sleeps or fails on request.

`python -m slurm_probe.task [--exit N] [--sleep S] [--lines K] [--interval S] [--last TEXT] [--pids DIR]
[--until FILE]`: ``--last`` is printed at the end without a newline; ``--pids`` gets ``<task>.pid`` (the
tests kill one); ``--until`` ends the sleep once FILE exists.
"""

import argparse
import json
import os
import signal
import sys
import time


def read_folder(folder):
    """Each file under ``folder`` (what the job reads at $SM_CHANNEL_<NAME>) by relative path: its text."""
    found = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path) as f:
                found[os.path.relpath(path, folder)] = f.read()
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--sleep", type=float, default=0)
    parser.add_argument("--lines", type=int, default=3)
    parser.add_argument("--interval", type=float, default=0, help="seconds between the lines")
    parser.add_argument("--last", default="", help="printed last, without a trailing newline")
    parser.add_argument("--pids", default="", help="a folder: write <task>.pid there")
    parser.add_argument("--until", default="", help="stop sleeping once this file exists")
    parser.add_argument("--print-env", action="append", default=[], help="print this variable's value")
    parser.add_argument("--ignore-term", action="store_true", help="ignore SIGTERM (run into the hard limit)")
    parser.add_argument("--check-dirs", action="store_true", help="print whether the contract's folders exist")
    args = parser.parse_args()
    tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = tf_config.get("task", {})
    me = f"{task.get('type', 'single')}:{task.get('index', 0)}"
    if args.pids:
        with open(os.path.join(args.pids, f"{me}.pid"), "w") as f:
            f.write(str(os.getpid()))
    channels = {k: v for k, v in os.environ.items() if k.startswith("SM_CHANNEL_")}
    print("CONTRACT", json.dumps({"task": me, "cluster": tf_config.get("cluster"),
                      "model_dir": os.environ.get("AIP_MODEL_DIR"), "channels": channels,
                      "data": {k: read_folder(v) for k, v in channels.items()}}), flush=True)
    if args.check_dirs:  # the contract's folders exist when the code starts
        named = {k: v for k, v in os.environ.items() if k in ("AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR",
                 "AIP_TENSORBOARD_LOG_DIR", "SM_MODEL_DIR", "SM_OUTPUT_DATA_DIR")}
        print("DIRS", json.dumps({k: os.path.isdir(v) for k, v in sorted(named.items())}), "CWD", os.getcwd(),
              "ENV", json.dumps(sorted(os.environ)), flush=True)
    for name in args.print_env:
        print(f"ENV {name}={os.environ.get(name)}", flush=True)
    for i in range(args.lines):
        print(f"line {i} from {me}", flush=True)
        time.sleep(args.interval)
    stop = []
    signal.signal(signal.SIGTERM, signal.SIG_IGN if args.ignore_term else lambda *_: stop.append(1))
    deadline = time.monotonic() + args.sleep
    while time.monotonic() < deadline and not stop and not (args.until and os.path.exists(args.until)):
        time.sleep(0.1)
    if stop:
        print(f"{me} got SIGTERM", flush=True)
    if args.last:
        sys.stdout.write(args.last)
        sys.stdout.flush()
    sys.exit(args.exit if me != "worker:0" else 0)


if __name__ == "__main__":
    main()
