"""Follow a run's output files on the cluster: one long-lived process (over one ssh session).

``python3 tail.py RUN OFFSETS_JSON [final]`` scans ``RUN/slurm/`` every 0.2 s for batch and task logs (a requeue's
new files included) and prints per complete line ``{"f", "o": offset after it, "l", "node", "t"}`` (``t`` from the
launcher's ``task-<T>.times``), and ``{"tick": n}`` after each scan (``"ended": true`` once the batch shell wrote its
status). Restarted with the caller's offsets it prints nothing twice and loses nothing; with ``final`` a last line
without its newline is printed too. Standard library only, Python >= 3.10."""

import bisect
import json
import os
import sys
import time


class Times:
    """When each byte of a task log was printed: the launcher's ``task-<T>.times`` (``OFFSET TIME`` per
    chunk of output), read as it grows."""

    def __init__(self, path: str):
        self.path, self.read_to = path, 0
        self.offsets: list[int] = []
        self.times: list[float] = []

    def at(self, offset: int) -> float | None:
        """The time the byte before ``offset`` was printed (None: not recorded, e.g. the launcher's own lines)."""
        if not self.offsets or offset > self.offsets[-1]:
            self._more()
        i = bisect.bisect_left(self.offsets, offset)
        return self.times[i] if i < len(self.times) else None

    def _more(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.read_to)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        self.read_to += end
        for record in data[:end].split(b"\n"):
            parts = record.split()
            if len(parts) == 2:
                self.offsets.append(int(parts[0]))
                self.times.append(float(parts[1]))


def node_of(run: str, rel: str) -> str | None:
    """``r0/task-1.log`` → the node the launcher recorded for that task, if it has."""
    folder, _, name = rel.rpartition("/")
    if not name.startswith("task-"):
        return None
    try:
        with open(os.path.join(run, "slurm", folder, name[:-4] + ".json")) as f:
            node: str | None = json.load(f).get("node")
            return node
    except (OSError, ValueError):
        return None


def files(run: str) -> list[str]:
    base = os.path.join(run, "slurm")
    found: list[str] = []
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return found
    for entry in entries:
        if entry.startswith("batch-") and entry.endswith(".log"):
            found.append(entry)
        elif entry.startswith("r") and entry[1:].isdigit():
            try:
                found += [f"{entry}/{n}" for n in sorted(os.listdir(os.path.join(base, entry))) if n.endswith(".log")]
            except OSError:
                pass
    return found


def batch_ended(run: str) -> str | None:
    """The latest run (``r<N>``) once its batch shell wrote its status: the watcher asks the controller then."""
    base = os.path.join(run, "slurm")
    try:
        runs = sorted(int(n[1:]) for n in os.listdir(base) if n[:1] == "r" and n[1:].isdigit())
    except OSError:
        return None
    if runs and os.path.exists(os.path.join(base, f"r{runs[-1]}", "batch.exit")):
        return f"r{runs[-1]}"
    return None


def main(argv: list[str]) -> None:
    run = argv[1]
    offsets = json.loads(argv[2]) if len(argv) > 2 else {}
    final = len(argv) > 3 and argv[3] == "final"
    tick = 0
    ended_seen = set()
    times: dict[str, Times] = {}
    while True:
        for rel in files(run):
            path = os.path.join(run, "slurm", rel)
            start = offsets.get(rel, 0)
            try:
                with open(path, "rb") as f:
                    f.seek(start)
                    data = f.read()
            except OSError:
                continue
            end = len(data) - 1 if final else data.rfind(b"\n")
            if end < 0:
                continue
            node = node_of(run, rel)
            if rel not in times and rel.endswith(".log"):
                times[rel] = Times(os.path.join(run, "slurm", rel[: -len(".log")] + ".times"))
            position = start
            for raw in data[: end + 1].splitlines(keepends=True):
                position += len(raw)
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                record = {"f": rel, "o": position, "l": line, "node": node}
                printed = times[rel].at(position) if rel in times else None
                if printed is not None:
                    record["t"] = printed
                print(json.dumps(record), flush=False)
            offsets[rel] = position
        tick += 1
        ended = batch_ended(run)
        news = ended is not None and ended not in ended_seen
        ended_seen.add(ended)
        print(json.dumps({"tick": tick, **({"ended": True} if news else {})}), flush=True)
        time.sleep(0.2)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
