"""Real-world training code through cloudtrain, unchanged: "N of M ran unchanged" per step.

    python -m bench.corpus [--steps validate,vertex,sagemaker,local] [--only NAME,...] [--out docs/corpus.md]

Each package of tests/packages/wild/ (tests/wild/corpus.py: our reproductions of public samples, with their
authors' launches) runs through validate, the Vertex AI and SageMaker dry runs and ``--local``. A step
counts when it gives what the target demands (it runs, or the one line the cloud itself would give);
the report lists the first error of each step that did not, and which steps are known to be pending.
``--local`` builds the image layers it needs once (``--cache``, default the tests' .test-cache/envs);
the first run downloads each TensorFlow (a development check, not part of the offline promise).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.wild import corpus  # noqa: E402  (the corpus and its expectations live with the tests)


def measure(names: list[str], steps: list[str], cache: Path) -> dict[str, dict[str, dict]]:
    results: dict[str, dict[str, dict]] = {}
    for name in names:
        for step in steps:
            with tempfile.TemporaryDirectory(prefix=f"corpus-{name}-") as tmp:
                work = Path(tmp)
                env = corpus.base_env(cache if step == "local" else work / "cache", work / "home")
                start = time.perf_counter()
                try:
                    done = corpus.run(name, step, work, env)
                    ok, line, rc = (
                        corpus.meets(done, corpus.EXPECTED[(name, step)]),
                        corpus.last_line(done),
                        done.returncode,
                    )
                except subprocess.TimeoutExpired:
                    ok, line, rc = False, "timed out", None
            took = round(time.perf_counter() - start, 1)
            results.setdefault(name, {})[step] = {"ok": ok, "rc": rc, "line": line.replace(str(work), "…"), "s": took}
            print(f"{name:28} {step:9} {'ran' if ok else 'NOT'} rc={rc} {took:6.1f}s  {line[:160]}", flush=True)
    return results


def render(results: dict[str, dict[str, dict]], steps: list[str]) -> str:
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    lines = [
        "# Real-world code, unchanged",
        "",
        f"Measured {when} on {commit.strip() or 'an unknown commit'} with `python -m bench.corpus`: the "
        f"{len(results)} packages of `tests/packages/wild/` (sources in their first lines), each launched as its "
        "author did. A step counts when it does what the target demands: the job runs, or cloudtrain gives the "
        "one line the cloud itself would give.",
        "",
        "| step | ran unchanged (as the target demands) | of which exit 0 |",
        "|---|---|---|",
    ]
    for step in steps:
        done = [n for n in results if step in results[n]]
        met, ran = (sum(test(results[n][step]) for n in done) for test in (lambda r: r["ok"], lambda r: r["rc"] == 0))
        lines.append(f"| {step} | {met} of {len(done)} | {ran} |")
    lines += [
        "",
        "Each package, step by step (ok: as the target demands: it runs, or the cloud's own refusal or error):",
        "",
    ]
    lines += ["| package | " + " | ".join(steps) + " |", "|---" * (len(steps) + 1) + "|"]
    for name, by_step in results.items():
        cells = [f"{'ok' if by_step[s]['ok'] else 'NOT'} (exit {by_step[s]['rc']})" for s in steps if s in by_step]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "The first error of each step that did not exit 0: the cloud's own refusal or error where it is ok,"]
    lines += ["else what cloudtrain does instead (pending: waiting on the part named).", ""]
    lines += ["| package | step | ok | first error |", "|---|---|---|---|"]
    for name, by_step in results.items():
        for step, got in by_step.items():
            if not got["ok"] or got["rc"]:
                pending = corpus.PENDING.get((name, step))
                why = f" (pending: {pending[1]})" if pending else ""
                lines.append(f"| {name} | {step} | {'ok' if got['ok'] else 'NOT'} | `{got['line'][:300]}`{why} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default=",".join(corpus.STEPS))
    parser.add_argument("--only", default="")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "corpus.md")
    parser.add_argument("--cache", type=Path, default=REPO / ".test-cache" / "envs")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(corpus.PACKAGES)
    steps = [s for s in args.steps.split(",") if s]
    results = measure(names, steps, args.cache)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")  # what the page is rendered from
    args.out.write_text(render(results, steps))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
