"""Run every benchmark, each in its own process, and write one report with a plot.

    python -m bench [--quick] [--out DIR] [--only NAME,...]
    python -m bench --only trainer --args "trainer=--quick --repeats 3"   # extra arguments for one bench
    python -m bench --render RESULTS_JSON [--out DIR]     # re-render a saved run
    python -m bench --quick --allow-dirty --out DIR       # a development run on uncommitted code

A run refuses a tree with uncommitted changes (exit 2): every figure names the commit it was
measured on, and that commit must be the code measured. ``--allow-dirty`` runs anyway and the
report says so, with the files.

Without --out the report goes to docs/benchmarks.md and docs/benchmarks.png, and the results
it was rendered from to docs/benchmarks.json. With --only, the benches not run keep their
results from that file (when it came from a run of the same mode, quick or not), so a run of
some benches refreshes their sections and leaves the others' as they were measured; the header
lists every run the report draws on, and each section says when it was measured. A bench that
fails or times out is reported as such and the others still run; the exit code is 1 when
any bench produced no results. Raw JSON and each bench's output are kept in a folder that
is printed at the end (DIR/raw with --out).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import _machine, _provenance, report

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bench:
    name: str
    module: str
    what: str


BENCHES = (
    Bench("cli", "bench.cli_bench", "CLI latency vs SDK import cost"),
    Bench("packaging", "bench.packaging_bench", "cloudtrain sdist vs python -m build"),
    Bench("vertex_packager", "bench._vertex_packager", "the Vertex SDK's script packager, same package"),
    Bench(
        "trainer",
        "bench.trainer_bench",
        "trainer vs Keras fit; 2 logical CPUs; bfloat16; bounded calls; notice handler",
    ),
    Bench("preemption", "bench.preemption_bench", "a preemption notice: time to checkpoint, steps redone"),
    Bench("vertex_logs", "bench.vertex_logs_bench", "Vertex log following, busy and idle job, vs gcloud"),
    Bench(
        "vertex_late",
        "bench.vertex_late_bench",
        "Vertex logs at 1, 8 and 60 replicas, lines up to 10 min late: vs the previous follower and gcloud",
    ),
    Bench("sagemaker_logs", "bench.sagemaker_logs_bench", "SageMaker log following at 1, 8 and 60 instances"),
    Bench("log_faults", "bench.log_faults_bench", "both clouds' log followers under 503s, throttling and outages"),
    Bench(
        "edit_loop", "bench.edit_loop_bench", "--local: submit → first training line after a code-only edit, index cut"
    ),
    Bench(
        "tensorboard_sync",
        "bench.tensorboard_sync_bench",
        "cloudtrain tensorboard's cloud mirror: bytes and list calls for an event file that grows every second",
    ),
)
TIMEOUT_S = {False: 3 * 3600, True: 900}  # per bench: full run, --quick
RESULTS = "benchmarks.json"  # beside benchmarks.md: what it was rendered from


def run_one(bench: Bench, quick: bool, raw: Path, extra: list[str] | None = None) -> dict:
    """Run one bench in a fresh process; never raises for the bench's own failures."""
    out_json, log = raw / f"{bench.name}.json", raw / f"{bench.name}.log"
    out_json.unlink(missing_ok=True)
    own = (["--quick"] if quick else []) + list(extra or [])
    cmd = [sys.executable, "-m", bench.module, "--json", str(out_json)] + own
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    entry = {
        "name": bench.name,
        "module": bench.module,
        "what": bench.what,
        "started": _machine.utc_now(),
        "args": " ".join(own),
        "load_before": _machine.loadavg(),
        "commit": _machine.describe()["git_commit"],
    }
    print(f"[bench] {bench.name}: {' '.join(cmd[1:])}", flush=True)
    start = time.perf_counter()
    try:
        with log.open("w") as sink:
            done = subprocess.run(
                cmd, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, timeout=TIMEOUT_S[quick]
            )
        rc, timed_out = done.returncode, False
    except subprocess.TimeoutExpired:
        rc, timed_out = None, True
    entry["seconds"] = round(time.perf_counter() - start, 1)
    entry["load_after"] = _machine.loadavg()
    entry["rc"] = rc
    data = _read_json(out_json)
    entry["data"] = data
    if timed_out:
        entry["status"], entry["error"] = "timeout", f"no result within {TIMEOUT_S[quick]} s"
    elif data is None:
        entry["status"], entry["error"] = "failed", f"exit {rc}, no JSON: " + _tail(log)
    elif rc != 0:
        entry["status"], entry["error"] = "checks failed", f"exit {rc}: its own pass/fail checks failed; results shown"
    else:
        entry["status"], entry["error"] = "ok", ""
    print(f"[bench] {bench.name}: {entry['status']} in {entry['seconds']} s {entry['error']}", flush=True)
    return entry


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _tail(log: Path, lines: int = 3) -> str:
    text = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return " | ".join(text[-lines:])[-600:] or "no output"


def select(only: str | None) -> list[Bench]:
    if not only:
        return list(BENCHES)
    wanted = [n.strip().removesuffix("_bench") for n in only.split(",") if n.strip()]
    known = {b.name for b in BENCHES}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise SystemExit(f"--only: unknown bench {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return [b for b in BENCHES if b.name in wanted]


def bench_args(pairs: list[str]) -> dict[str, list[str]]:
    """``--args NAME=ARGS`` → {name: argv}."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().removesuffix("_bench")
        if not sep or name not in {b.name for b in BENCHES}:
            raise SystemExit(
                f"--args {pair!r}: expected NAME=ARGS with NAME one of {', '.join(b.name for b in BENCHES)}"
            )
        out[name] = shlex.split(value)
    return out


def runs_of(results: dict) -> list[dict]:
    """The runs a results file draws on (a file from before merging has one: its meta)."""
    if "runs" in results:
        return results["runs"]
    meta = results["meta"]
    ran = [n for n, b in results["benches"].items() if b["status"] != "skipped"]
    return [
        {k: meta.get(k) for k in ("started", "finished", "load_start", "load_end", "quick")}
        | {
            "commit": meta["machine"]["git_commit"],
            "benches": ran,
            "command": "python -m bench" + (" --quick" if meta.get("quick") else "") + f" --only {','.join(ran)}",
        }
    ]


def merge(previous: dict | None, results: dict) -> dict:
    """Fill the benches this run skipped with ``previous``'s results for them (same mode only)."""
    if not previous or bool(previous["meta"].get("quick")) != bool(results["meta"].get("quick")):
        return results
    kept = {
        name: entry
        for name, entry in previous["benches"].items()
        if entry["status"] != "skipped" and results["benches"].get(name, {}).get("status") == "skipped"
    }
    if not kept:
        return results
    benches = {name: kept.get(name, entry) for name, entry in results["benches"].items()}
    earlier = [r | {"benches": [n for n in r["benches"] if n in kept]} for r in runs_of(previous)]
    runs = [r for r in earlier if r["benches"]] + runs_of(results)
    return {"meta": results["meta"], "runs": runs, "benches": benches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (the CI smoke run)")
    parser.add_argument("--out", type=Path, help="write benchmarks.md and benchmarks.png here instead of docs/")
    parser.add_argument("--only", help="comma-separated: " + ",".join(b.name for b in BENCHES))
    parser.add_argument(
        "--args",
        action="append",
        default=[],
        metavar="NAME=ARGS",
        help="extra arguments for one bench, e.g. trainer='--quick --repeats 3' (repeatable)",
    )
    parser.add_argument("--render", type=Path, metavar="RESULTS_JSON", help="only re-render a saved results.json")
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="run on a tree with uncommitted changes (a development run; the report says so)",
    )
    args = parser.parse_args(argv)
    dirty = [] if args.render else _provenance.dirty(REPO)
    if dirty and not args.allow_dirty:
        shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
        print(
            f"python -m bench: the tree has uncommitted changes ({shown}), so no commit describes the code it "
            "would measure; commit or stash them, or pass --allow-dirty for a development run",
            file=sys.stderr,
        )
        return 2
    out = args.out or REPO / "docs"
    out.mkdir(parents=True, exist_ok=True)

    if args.render:
        results = json.loads(args.render.read_text())
    else:
        chosen = select(args.only)
        raw = out / "raw" if args.out else Path(tempfile.mkdtemp(prefix="cloudtrain-bench-"))
        raw.mkdir(parents=True, exist_ok=True)
        meta = {
            "started": _machine.utc_now(),
            "load_start": _machine.loadavg(),
            "quick": args.quick,
            "machine": _machine.describe(),
            **({"dirty": dirty} if dirty else {}),
        }
        extra = bench_args(args.args)
        ran = {b.name: run_one(b, args.quick, raw, extra.get(b.name)) for b in chosen}
        skipped = {
            b.name: {
                "name": b.name,
                "module": b.module,
                "what": b.what,
                "status": "skipped",
                "error": "not in --only",
                "data": None,
            }
            for b in BENCHES
            if b.name not in ran
        }
        meta.update(finished=_machine.utc_now(), load_end=_machine.loadavg())
        results = {"meta": meta, "benches": {b.name: ran.get(b.name) or skipped[b.name] for b in BENCHES}}
        results["runs"] = runs_of(results)
        results["runs"][0]["command"] = " ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])])
        (raw / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        print(f"[bench] raw results and logs: {raw}")
        results = merge(_read_json(out / RESULTS), results)

    (out / RESULTS).write_text(json.dumps(results, indent=2) + "\n")
    md, png = report.write(results, out)
    print(f"[bench] wrote {md} and {png}")
    failed = [n for n, b in results["benches"].items() if b["status"] in ("failed", "timeout")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
