"""The logs section: Vertex and SageMaker followers side by side by replica count.

Both log benches' results are normalised to one record shape, which the plot uses too.
"""

from __future__ import annotations

import math
from typing import Any

# (bench, follower as the bench names it) → label in the report, in column order.
FOLLOWERS = {
    ("vertex", "cloudtrain"): "cloudtrain → Vertex",
    ("vertex", "gcloud-60s"): "gcloud, 60 s poll",
    ("sagemaker", "cloudtrain"): "cloudtrain → SageMaker",
    ("sagemaker", "cloudtrain polling (before)"): "cloudtrain → SageMaker, polling (before)",
    ("sagemaker", "sm-core logs_for_job"): "SageMaker SDK logs_for_job, 10 s poll",
    ("sagemaker", "sm-core TrainingJob.wait"): "SageMaker SDK TrainingJob.wait, 5 s poll",
    ("sagemaker", "…wait, default region"): "TrainingJob.wait, client in the default region",
}


def _num(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def records(vertex_scale: dict | None, sagemaker: dict | None) -> list[dict]:
    """One record per (follower, replica count): delay, requests per minute, correctness."""
    out = []
    for r in ((vertex_scale or {}).get("data") or {}).get("results", []):
        out.append({
            "cloud": "vertex", "follower": FOLLOWERS.get(("vertex", r["follower"]), r["follower"]),
            "replicas": r["replicas"], "p50": _num(r["delay_median_s"]), "p95": _num(r["delay_p95_s"]),
            "max": _num(r["delay_max_s"]), "per_min": r["requests_per_minute"], "written": r["lines"],
            "lost": r["lost"], "dup": r["duplicates"], "ooo": r["out_of_order"], "note": "",
            "what": "ListLogEntries",
        })
    for r in ((sagemaker or {}).get("data") or {}).get("results", []):
        out.append({
            "cloud": "sagemaker", "follower": FOLLOWERS.get(("sagemaker", r["follower"]), r["follower"]),
            "replicas": r["instances"], "p50": _num(r["delay_p50_s"]), "p95": _num(r["delay_p95_s"]),
            "max": _num(r["delay_max_s"]), "per_min": r["calls_per_minute"], "written": r["written"],
            "lost": r["lost"], "dup": r["duplicated"], "ooo": r["out_of_order"], "note": r.get("note", ""),
            "what": ", ".join(f"{k} {v}" for k, v in r.get("calls", {}).items()),
        })
    return out


def _cell(rec: dict | None, kind: str) -> str:
    if rec is None:
        return "–"
    if kind == "delay":
        if rec["p50"] is None:
            return "printed nothing"
        return f"{rec['p50']:.1f} ({rec['p95']:.1f})" + (" †" if rec["note"] else "")
    lost = f"{rec['lost']:,} lost" if rec["lost"] else "0 lost"
    return f"{rec['per_min']:,.1f} ({lost})" + (" †" if rec["note"] else "")


def section(vertex_scale: dict | None, sagemaker: dict | None, vertex_logs: dict | None) -> str:
    from bench.report import provenance, table

    recs = records(vertex_scale, sagemaker)
    text = "## 4. Logs\n\n"
    text += "Vertex at 1/8/60 replicas (`bench/_vertex_scale.py`, the Vertex bench's own `run()`): " + provenance(vertex_scale)
    text += "SageMaker at 1/8/60 instances: " + provenance(sagemaker) + "\n"
    if recs:
        followers = [f for f in FOLLOWERS.values() if any(r["follower"] == f for r in recs)]
        counts = sorted({r["replicas"] for r in recs})
        by = {(r["follower"], r["replicas"]): r for r in recs}
        vs = (vertex_scale or {}).get("data") or {}
        sm = (sagemaker or {}).get("data") or {}
        text += (f"Each replica prints one line a second: Vertex jobs run {vs.get('minutes', '?')} min on the Cloud "
                 f"Logging fake, SageMaker jobs {sm.get('running_s', '?')} s on moto, both on a virtual clock, so the "
                 "seconds below are the followers' own pacing, not this machine's speed.\n\n")
        text += "**Delay from a line becoming readable to it being printed: median (p95), seconds**\n\n"
        text += table(["replicas"] + followers, [[n] + [_cell(by.get((f, n)), "delay") for f in followers]
                                                 for n in counts]) + "\n"
        text += "**API requests per minute while following (lines lost)**\n\n"
        text += table(["replicas"] + followers, [[n] + [_cell(by.get((f, n)), "calls") for f in followers]
                                                 for n in counts]) + "\n"
        text += before_after(sm)
        notes = {r["note"] for r in recs if r["note"]}
        if notes:
            text += "† " + "; ".join(sorted(notes)) + " (figures up to where it was stopped).\n\n"
        text += "<details><summary>Every figure, per follower and replica count</summary>\n\n"
        text += table(["follower", "replicas", "lines", "lost", "duplicated", "out of order", "p50 s", "p95 s", "max s",
                       "requests/min", "requests"],
                      [[r["follower"], r["replicas"], f"{r['written']:,}", f"{r['lost']:,}", r["dup"], f"{r['ooo']:,}",
                        _f(r["p50"]), _f(r["p95"]), _f(r["max"]), f"{r['per_min']:,.1f}", r["what"]]
                       for r in sorted(recs, key=lambda r: (r["replicas"], r["cloud"]))], "lrrrrrrrrrl")
        text += "\n</details>\n\n"
        text += ("Vertex requests count only ListLogEntries (the job's state comes from the bench, not the fake); "
                 "SageMaker requests count every call (DescribeLogStreams, GetLogEvents, DescribeTrainingJob; "
                 "with Live Tail also StartLiveTail and DescribeLogGroups). "
                 "The SageMaker job runs in eu-west-1 with AWS_DEFAULT_REGION=us-east-1: `TrainingJob.wait` builds "
                 "its logs client in the default region, finds no streams there and prints nothing (its last "
                 "column); the other SageMaker SDK column gives it a client in the job's region. "
                 "Cloud Logging's default read quota is 60 ListLogEntries a minute per project, which cloudtrain's "
                 "Vertex follower keeps under (50/min sustained). Vertex lines are batched by the agent every 5 s "
                 "and 5 % of batches are held back 10–40 s more; a line that only becomes readable after the "
                 "follower has stopped (the job ended) counts as lost, and a held-back batch printed after newer "
                 "lines counts as out of order.\n\n")
    text += busy_idle(vertex_logs)
    return text


def before_after(sm: dict) -> str:
    """SageMaker: CloudWatch Logs calls a minute while the job runs, polling every stream vs Live Tail."""
    from bench.report import table

    by = {(r["follower"], r["instances"]): r for r in sm.get("results", [])}
    rows = []
    for n in sorted({r["instances"] for r in sm.get("results", [])}):
        before, after = by.get(("cloudtrain polling (before)", n)), by.get(("cloudtrain", n))
        if before and after and after.get("logs_calls_per_minute_running") is not None:
            rows.append([n, _f(before.get("logs_calls_per_minute_running")), _f(after["logs_calls_per_minute_running"]),
                         after.get("detail", "")])
    if not rows:
        return ""
    return ("**SageMaker: CloudWatch Logs calls per minute while the job runs** (until it is Completed, so without "
            "the final read of every stream), before (polling every stream) and after (Live Tail, with GetLogEvents "
            f"as the ground truth behind it; the Live Tail follower runs on a clock sped up {sm.get('speed', '?')}×, "
            "so its delays include this machine's scheduling noise times that)\n\n"
            + table(["instances", "before: polling", "after: Live Tail", "Live Tail follower's own counts"], rows,
                    "rrrl") + "\n")


def busy_idle(entry: dict | None) -> str:
    from bench.report import provenance, table

    text = "**Vertex, a busy and an idle 2-replica job** (`bench/vertex_logs_bench.py`): " + provenance(entry) + "\n"
    data = (entry or {}).get("data") or {}
    if data.get("results"):
        text += f"{data.get('minutes', '?')}-minute jobs; busy: 5 lines/s per replica, idle: one line a minute.\n\n"
        text += table(["job", "follower", "lines", "lost", "out of order", "p50 s", "p95 s", "max s", "requests/min",
                       "most in 60 s"],
                      [[r["scenario"], FOLLOWERS.get(("vertex", r["follower"]), r["follower"]), f"{r['lines']:,}",
                        f"{r['lost']:,}", f"{r['out_of_order']:,}", _f(_num(r["delay_median_s"])), _f(_num(r["delay_p95_s"])),
                        _f(_num(r["delay_max_s"])), r["requests_per_minute"], r["peak_requests_in_60s"]]
                       for r in data["results"]], "llrrrrrrrr")
    return text


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"
