"""The logs section: Vertex and SageMaker followers side by side by replica count.

Both log benches' results are normalised to one record shape, which the plot uses too.
"""

from __future__ import annotations

import math
from typing import Any

from bench._markdown import provenance, table
from bench._stats import NO_DIFFERENCE

# (bench, follower as the bench names it) → label in the report, in column order.
FOLLOWERS = {
    ("vertex", "cloudtrain"): "cloudtrain → Vertex",
    ("vertex", "cloudtrain, polling alone"): "cloudtrain → Vertex, polling alone",
    ("vertex", "previous follower"): "previous cloudtrain follower (60 s look-back)",
    ("vertex", "gcloud ml-engine"): "gcloud ml-engine stream-logs",
    ("vertex", "gcloud ai custom-jobs"): "gcloud ai custom-jobs stream-logs",
    ("sagemaker", "cloudtrain"): "cloudtrain → SageMaker",
    ("sagemaker", "cloudtrain polling (before)"): "cloudtrain → SageMaker, polling (before)",
    ("sagemaker", "sm-core logs_for_job"): "SageMaker SDK logs_for_job, 10 s poll",
    ("sagemaker", "sm-core TrainingJob.wait"): "SageMaker SDK TrainingJob.wait, 5 s poll",
    ("sagemaker", "…wait, default region"): "TrainingJob.wait, client in the default region",
}
# Vertex followers in the table by replica count beside SageMaker (all of them: the lateness table).
COMBINED = {"cloudtrain", "previous follower", "gcloud ml-engine"}
AI_NOTE = (
    "gcloud ai custom-jobs stream-logs never stops on its own here; the bench stopped it a few polls after the "
    "last line arrived (`bench/vertex_late_bench.py`)"
)


def _num(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _median(row: dict, key: str) -> float | None:
    value = row.get(key)
    return value["median"] if isinstance(value, dict) else _num(value)


def records(vertex_late: dict | None, sagemaker: dict | None) -> list[dict]:
    """One record per (follower, replica count): delay, requests per minute, correctness
    (Vertex: medians over seeds)."""
    out = []
    for r in ((vertex_late or {}).get("data") or {}).get("summary", []):
        if r["follower"] not in COMBINED:
            continue
        out.append(
            {
                "cloud": "vertex",
                "follower": FOLLOWERS.get(("vertex", r["follower"]), r["follower"]),
                "replicas": r["replicas"],
                "p50": _median(r, "delay_p50_s"),
                "p95": _median(r, "delay_p95_s"),
                "max": _median(r, "delay_max_s"),
                "per_min": _median(r, "list_per_minute"),
                "written": _median(r, "lines"),
                "lost": _median(r, "lost"),
                "dup": _median(r, "duplicates"),
                "ooo": _median(r, "out_of_order"),
                "note": "",
                "what": f"ListLogEntries; medians of {r['runs']} seeds",
            }
        )
    for r in ((sagemaker or {}).get("data") or {}).get("results", []):
        out.append(
            {
                "cloud": "sagemaker",
                "follower": FOLLOWERS.get(("sagemaker", r["follower"]), r["follower"]),
                "replicas": r["instances"],
                "p50": _num(r["delay_p50_s"]),
                "p95": _num(r["delay_p95_s"]),
                "max": _num(r["delay_max_s"]),
                "per_min": r["calls_per_minute"],
                "written": r["written"],
                "lost": r["lost"],
                "dup": r["duplicated"],
                "ooo": r["out_of_order"],
                "note": r.get("note", ""),
                "what": ", ".join(f"{k} {v}" for k, v in r.get("calls", {}).items()),
            }
        )
    return out


def _counts(recs: list[dict], cloud: str) -> str:
    """The replica counts measured for ``cloud``, as ``1/8/60``."""
    return "/".join(str(n) for n in sorted({r["replicas"] for r in recs if r["cloud"] == cloud})) or "?"


def _cell(rec: dict | None, kind: str) -> str:
    if rec is None:
        return "–"
    if kind == "delay":
        if rec["p50"] is None:
            return "printed nothing"
        return f"{rec['p50']:.1f} ({rec['p95']:.1f})" + (" †" if rec["note"] else "")
    lost = f"{rec['lost']:,} lost" if rec["lost"] else "0 lost"
    return f"{rec['per_min']:,.1f} ({lost})" + (" †" if rec["note"] else "")


def section(vertex_late: dict | None, sagemaker: dict | None, vertex_logs: dict | None) -> str:
    recs = records(vertex_late, sagemaker)
    text = "## 4. Logs\n\n"
    text += (
        f"Vertex at {_counts(recs, 'vertex')} replicas, lines arriving late (`bench/vertex_late_bench.py`): "
        + provenance(vertex_late)
    )
    text += f"SageMaker at {_counts(recs, 'sagemaker')} instances: " + provenance(sagemaker) + "\n"
    if recs:
        followers = [f for f in FOLLOWERS.values() if any(r["follower"] == f for r in recs)]
        counts = sorted({r["replicas"] for r in recs})
        by = {(r["follower"], r["replicas"]): r for r in recs}
        vs = (vertex_late or {}).get("data") or {}
        sm = (sagemaker or {}).get("data") or {}
        text += (
            f"Each Vertex replica prints {_rate(vs.get('lines_per_second'))} (SageMaker's: the rate set in "
            f"`bench/sagemaker_logs_bench.py`): Vertex jobs run {vs.get('minutes', '?')} min on the Cloud "
            f"Logging fake, SageMaker jobs {sm.get('running_s', '?')} s on moto, both on a virtual clock, so the "
            "seconds below are the followers' own pacing, not this machine's speed (cloudtrain's Vertex live tail "
            f"runs on a real clock sped up {vs.get('speed', '?')}×: see below). Vertex figures are medians over "
            f"{vs.get('repeats', '?')} seeds; their spread and verdicts are in the Vertex table below.\n\n"
        )
        text += "**Delay from a line becoming readable to it being printed: median (p95), seconds**\n\n"
        text += (
            table(["replicas"] + followers, [[n] + [_cell(by.get((f, n)), "delay") for f in followers] for n in counts])
            + "\n"
        )
        text += "**API requests per minute while following (lines lost)**\n\n"
        text += (
            table(["replicas"] + followers, [[n] + [_cell(by.get((f, n)), "calls") for f in followers] for n in counts])
            + "\n"
        )
        text += before_after(sm)
        notes = {r["note"] for r in recs if r["note"]}
        if notes:
            text += "† " + "; ".join(sorted(notes)) + " (figures up to where it was stopped).\n\n"
        text += "<details><summary>Every figure, per follower and replica count</summary>\n\n"
        text += table(
            [
                "follower",
                "replicas",
                "lines",
                "lost",
                "duplicated",
                "out of order",
                "p50 s",
                "p95 s",
                "max s",
                "requests/min",
                "requests",
            ],
            [
                [
                    r["follower"],
                    r["replicas"],
                    f"{r['written']:,}",
                    f"{r['lost']:,}",
                    r["dup"],
                    f"{r['ooo']:,}",
                    _f(r["p50"]),
                    _f(r["p95"]),
                    _f(r["max"]),
                    f"{r['per_min']:,.1f}",
                    r["what"],
                ]
                for r in sorted(recs, key=lambda r: (r["replicas"], r["cloud"]))
            ],
            "lrrrrrrrrrl",
        )
        text += "\n</details>\n\n"
        text += (
            "Vertex requests count only ListLogEntries (`entries.list`; the job's state comes from the bench, not "
            "the fake); SageMaker requests count every call (DescribeLogStreams, GetLogEvents, DescribeTrainingJob; "
            "with Live Tail also StartLiveTail and DescribeLogGroups). "
            "The SageMaker job runs in eu-west-1 with AWS_DEFAULT_REGION=us-east-1: `TrainingJob.wait` builds "
            "its logs client in the default region, finds no streams there and prints nothing (its last "
            "column); the other SageMaker SDK column gives it a client in the job's region. "
            "Cloud Logging's default read quota is 60 ListLogEntries a minute per project, shared by every "
            "reader of the project.\n\n"
        )
    text += late(vertex_late)
    text += busy_idle(vertex_logs)
    return text


def before_after(sm: dict) -> str:
    """SageMaker: CloudWatch Logs calls a minute while the job runs, polling every stream vs Live Tail."""
    by = {(r["follower"], r["instances"]): r for r in sm.get("results", [])}
    rows = []
    for n in sorted({r["instances"] for r in sm.get("results", [])}):
        before, after = by.get(("cloudtrain polling (before)", n)), by.get(("cloudtrain", n))
        if before and after and after.get("logs_calls_per_minute_running") is not None:
            rows.append(
                [
                    n,
                    _f(before.get("logs_calls_per_minute_running")),
                    _f(after["logs_calls_per_minute_running"]),
                    after.get("detail", ""),
                ]
            )
    if not rows:
        return ""
    return (
        "**SageMaker: CloudWatch Logs calls per minute while the job runs** (until it is Completed, so without "
        "the final read of every stream), before (polling every stream) and after (Live Tail, with GetLogEvents "
        f"as the ground truth behind it; the Live Tail follower runs on a clock sped up {sm.get('speed', '?')}×, "
        "so its delays include this machine's scheduling noise times that)\n\n"
        + table(["instances", "before: polling", "after: Live Tail", "Live Tail follower's own counts"], rows, "rrrl")
        + "\n"
    )


def _spread(value: dict | float | None, fmt: str = "{:,.1f}") -> str:
    """``median (min–max)``, or the one value when every run gave it."""
    if value is None:
        return "–"
    if not isinstance(value, dict):
        return fmt.format(value)
    m, lo, hi = (fmt.format(value[k]) for k in ("median", "min", "max"))
    return m if lo == hi else f"{m} ({lo}–{hi})"


def _count(value: dict | None) -> str:
    return (
        _spread(value, "{:,.0f}")
        if not isinstance(value, dict) or value["median"] == int(value["median"])
        else _spread(value, "{:,.1f}")
    )


def _rate(per_second: float | None) -> str:
    """Lines per second as the bench recorded them; where the rate is set when it did not."""
    if per_second is None:
        return "lines at the rate set in `bench/vertex_late_bench.py`"
    return f"{per_second:g} line(s) a second"


def _verdict(word: str, better: str, worse: str) -> str:
    return {"lower": better, "higher": worse}.get(word, f"**{word}**" if word == NO_DIFFERENCE else word)


def late(entry: dict | None) -> str:
    """The Vertex lateness bench: every follower, each figure's median (min–max) over seeds, and verdicts."""
    data = (entry or {}).get("data") or {}
    rows = data.get("summary") or []
    if not rows:
        return ""
    order = list(FOLLOWERS)
    rows = sorted(
        rows,
        key=lambda r: (
            r["replicas"],
            order.index(("vertex", r["follower"])) if ("vertex", r["follower"]) in FOLLOWERS else 99,
        ),
    )
    text = (
        f"**Vertex, lines arriving late** (`bench/vertex_late_bench.py`; {data.get('minutes', '?')}-minute "
        f"jobs, {data.get('repeats', '?')} seeds per case; each cell is the median over the seeds with its min–max "
        "when they differ)\n\n"
        "Each replica's logging agent ships its lines in batches that Cloud Logging receives a little later, "
        "some of them seconds to minutes late; a batch's lines arrive in shuffled order, some batches arrive a "
        "second time (same insertIds), and halfway through the run "
        f"the live tail drops {data.get('suppressed', '?')} entries and says so (`suppression_info`); the "
        "intervals and shares are set in `bench/vertex_late_bench.py`. A line is "
        "**lost** when it was readable at the follower's last read and was never shown; a line that arrived only "
        "after that is counted apart (**after its stop**): not lost, `cloudtrain logs JOB` shows it. Delay: from "
        "the line's arrival (its receiveTimestamp) to the follower yielding it.\n\n"
    )
    text += table(
        [
            "replicas",
            "follower",
            "lines",
            "lost",
            "after its stop",
            "duplicated",
            "out of order",
            "marked late",
            "p50 s",
            "p95 s",
            "max s",
            "entries.list / min",
            "most in any 60 s",
            "stopped after the job's end, s",
        ],
        [
            [
                r["replicas"],
                FOLLOWERS.get(("vertex", r["follower"]), r["follower"])
                + (" ‡" if r["follower"] == "gcloud ai custom-jobs" else ""),
                _count(r.get("lines")),
                _count(r.get("lost")),
                _count(r.get("after_stop")),
                _count(r.get("duplicates")),
                _count(r.get("out_of_order")),
                _count(r.get("marked_late")) if r["follower"].startswith("cloudtrain") else "–",
                _spread(r.get("delay_p50_s"), "{:,.2f}"),
                _spread(r.get("delay_p95_s")),
                _spread(r.get("delay_max_s")),
                _spread(r.get("list_per_minute")),
                _count(r.get("peak_list_in_60s")),
                _spread(r.get("stopped_after_end_s"), "{:,.0f}"),
            ]
            for r in rows
        ],
        "llrrrrrrrrrrrr",
    )
    verdicts = [r for r in rows if r.get("verdicts")]
    if verdicts:
        text += (
            '\n**cloudtrain against each other follower**, same replicas and seeds: "no measurable difference" '
            "where the two followers' min–max ranges over the seeds overlap (`bench/_stats.py` `compare`).\n\n"
        )
        text += table(
            ["replicas", "against", "lines lost", "duplicated", "delay p50", "delay p95", "entries.list / min"],
            [
                [
                    r["replicas"],
                    FOLLOWERS.get(("vertex", r["follower"]), r["follower"]),
                    _verdict(r["verdicts"]["lost"], "cloudtrain loses fewer", "cloudtrain loses more"),
                    _verdict(r["verdicts"]["duplicates"], "cloudtrain fewer", "cloudtrain more"),
                    _verdict(r["verdicts"]["delay_p50_s"], "cloudtrain sooner", "cloudtrain later"),
                    _verdict(r["verdicts"]["delay_p95_s"], "cloudtrain sooner", "cloudtrain later"),
                    _verdict(r["verdicts"]["list_per_minute"], "cloudtrain fewer", "cloudtrain more"),
                ]
                for r in verdicts
            ],
            "lllllll",
        )
    ours = [r for r in rows if r.get("logs_after_shows")]
    if ours:
        every = all(r["logs_after_shows"]["min"] == r["lines"]["max"] for r in ours)
        text += (
            "\n`cloudtrain logs JOB` (the same reader's `read_all`), run after the last line arrived, showed "
            + ("every line in every cloudtrain run" if every else "**not** every line in some run")
            + ", the lines "
            "that arrived after the follower's stop included.\n"
        )
    text += (
        f"\n‡ {AI_NOTE}. Followers: **cloudtrain** is `LogTailer` as `submit` and `logs --follow` run it "
        "(TailLogEntries live view, `entries.list` on receiveTimestamp as ground truth, `--drain` at its default; "
        "the buffer window, look-back and read rate are in `cloudtrain/backends/vertex/logs.py`); its tail runs on "
        f"a thread, so it runs on a real clock sped up {data.get('speed', '?')}×, "
        "and its delays carry this machine's scheduling noise times that factor; its largest delays are the "
        "entries the tail dropped (`suppression_info`), which wait for the re-read of the entries received "
        "shortly before the newest one seen, at the tail's own read rate. **Polling alone** is its fallback "
        "where the server has no TailLogEntries. The **previous cloudtrain follower** is the one before 79b4f06 (a "
        "60 s look-back on the entry's own timestamp), kept in `bench/_vertex_baselines.py`. **gcloud** is "
        "re-implemented from the Google Cloud SDK 578.0.0 source (`bench/_vertex_baselines.py` names every line "
        "followed): `command_lib/logs/stream.py` `LogFetcher` polls every `--polling-interval` (default 60 s: "
        "`command_lib/ml_engine/flags.py` l. 381-388, `command_lib/ai/flags.py` l. 38-45) for at most 1000 entries "
        "(l. 176) after its position and older than now − 5 s (l. 94-108), keeps only entries that move the "
        "position forward (l. 52-79, 220-221), and asks its continue function every 10 s (`ml_engine/jobs_util.py` "
        "l. 43, `ai/log_util.py` l. 30) with the count of consecutive empty polls (l. 223-252). "
        "`ml-engine` (`command_lib/ml_engine/log_utils.py` l. 60-88): go on while at most one poll in a row was "
        "empty, then until the job, fetched again, has an endTime. `ai custom-jobs` "
        "(`api_lib/ai/custom_jobs/client.py` l. 106-124): the same test on the job as fetched once when the "
        "command started (l. 117), so on a running job it never stops.\n\n"
    )
    return text


BUSY_VERDICTS = {
    "lost": ("lost", "fewer", "more"),
    "delay_median_s": ("p50", "sooner", "later"),
    "requests_per_minute": ("requests/min", "fewer", "more"),
}


def busy_idle(entry: dict | None) -> str:
    text = "**Vertex, a busy and an idle job** (`bench/vertex_logs_bench.py`): " + provenance(entry) + "\n"
    data = (entry or {}).get("data") or {}
    rows = data.get("summary") or []
    if rows:
        text += (
            f"{data.get('minutes', '?')}-minute jobs, virtual clock; the busy job prints many lines a second per "
            "replica, the idle one a line now and then, and some batches are held back (the rates and the share: "
            "`bench/vertex_logs_bench.py`). Each cell is the median over "
            f"{data.get('repeats', '?')} seeds (min–max when they differ); the verdict compares gcloud with "
            "cloudtrain, polling alone, figure by figure.\n\n"
        )
        text += table(
            [
                "job",
                "follower",
                "lines",
                "lost",
                "out of order",
                "p50 s",
                "p95 s",
                "max s",
                "requests/min",
                "most in 60 s",
                "verdict (cloudtrain against it)",
            ],
            [
                [
                    r["scenario"],
                    FOLLOWERS.get(("vertex", r["follower"]), r["follower"]),
                    _count(r.get("lines")),
                    _count(r.get("lost")),
                    _count(r.get("out_of_order")),
                    _spread(r.get("delay_median_s")),
                    _spread(r.get("delay_p95_s")),
                    _spread(r.get("delay_max_s")),
                    _spread(r.get("requests_per_minute")),
                    _count(r.get("peak_requests_in_60s")),
                    "; ".join(
                        f"{name}: {_verdict(r['verdicts'][k], better, worse)}"
                        for k, (name, better, worse) in BUSY_VERDICTS.items()
                    )
                    if r.get("verdicts")
                    else "–",
                ]
                for r in rows
            ],
            "llrrrrrrrrl",
        )
    return text


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"
