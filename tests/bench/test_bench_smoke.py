"""The CI smoke run: ``python -m bench --quick`` runs every bench module, the trainer's included,
and writes the report and the plot, each section with rows.

The run happens once per test session (the ``quick_run`` fixture, module-scoped: with
``--dist loadfile`` one xdist worker runs this whole file), and every check that needs a bench at
quick size reads that run's results here instead of running the bench again: the log followers
under faults (section 6) and the Vertex follower in the busy scenario (section 4).

On an idle 2-core machine the run takes a few minutes, most of it TensorFlow processes of the
trainer bench (digits and tiny synthetic data, one repeat, 2-3 epochs), of the preemption bench
(one preemption and restart at 1 and 2 workers) and importing google.cloud.aiplatform.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.__main__ import BENCHES

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class QuickRun:
    """One ``python -m bench --quick`` run: its exit, output and --out folder."""

    done: subprocess.CompletedProcess[str]
    out: Path

    def bench(self, name: str) -> dict:
        """One bench's entry in the run's raw results, checked to have run cleanly."""
        results = json.loads((self.out / "raw" / "results.json").read_text())
        entry = results["benches"][name]
        assert entry["status"] == "ok", f"{name}: {entry['status']}: {entry['error']}"
        return entry["data"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> QuickRun:
    out = tmp_path_factory.mktemp("bench-quick")
    # --allow-dirty: the suite also runs on a developer's uncommitted tree
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--allow-dirty", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1480,
    )
    return QuickRun(done, out)


def test_every_bench_module_is_run_by_the_runner():
    """A bench module the runner does not know is never run by `make bench` nor by this smoke test."""
    on_disk = {f"bench.{p.stem}" for p in (REPO / "bench").glob("*_bench.py")}
    assert on_disk - {b.module for b in BENCHES} == set()


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.tf
@pytest.mark.timeout(1500)  # the first test to ask for quick_run runs the bench in its set-up
def test_quick_bench_run_writes_report_and_plot(quick_run):
    done, tmp_path = quick_run.done, quick_run.out
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    md = (tmp_path / "benchmarks.md").read_text()
    assert (tmp_path / "benchmarks.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "raw" / "results.json").exists()
    assert "skipped" not in md.split("\n## ")[0], "every bench runs"
    sections = dict(part.split("\n", 1) for part in md.split("\n## ")[1:])
    assert list(sections) == [
        "1. CLI latency",
        "2. Packaging",
        "3. Trainer",
        "4. Logs",
        "5. Preemption",
        "6. Logs under faults",
        "7. The edit–run loop (--local)",
        "8. TensorBoard's cloud mirror",
    ]
    assert "| s3 (moto) | incremental |" in sections["8. TensorBoard's cloud mirror"]
    faults = sections["6. Logs under faults"]
    for cloud in ("SageMaker (CloudWatch Logs)", "Vertex (Cloud Logging)"):
        assert f"| {cloud} | outage-2s: connections refused for 2 s | 1 | " in faults
    assert "| `cloudtrain --help` |" in sections["1. CLI latency"]
    assert "| cloudtrain (in-process) |" in sections["2. Packaging"]
    assert "| Vertex SDK script packager (setup.py sdist) |" in sections["2. Packaging"]
    trainer = sections["3. Trainer"]
    assert "| digits cnn batch 32: trainer, 20 steps/call |" in trainer
    assert "| digits cnn batch 32: fit, trainer's pipeline, 20 steps/call, no XLA |" in trainer
    assert "| digits: trainer / fit, same pipeline, 20 steps/call, no XLA | " in trainer
    assert "| cnn mixed_bfloat16 / float32 | " in trainer and "1 run(s): too few for a verdict" in trainer
    assert "| 1 → 4 GPUs (MirroredStrategy) | 21 s → 9 s" in trainer
    # issue 20: bounded calls and the notice handler, on vs off; the metadata watcher really polled
    assert "| synthetic 2048 8x8 cnn batch 32: bounded calls ~1 s, handler off |" in trainer
    assert "| notice handler on / off (bounded calls ~1 s) | " in trainer
    assert "| bounded calls ~1 s / one call per epoch (handler on) | " in trainer
    assert "polls answered" in trainer and "(0 polls answered)" not in trainer
    for n in (1, 8, 60):
        assert f"\n| {n} | " in sections["4. Logs"]
    assert "| busy | cloudtrain → Vertex, polling alone |" in sections["4. Logs"]
    assert "| 8 | gcloud ml-engine stream-logs |" in sections["4. Logs"]  # the lateness table, quick: 1 and 8 replicas
    preemption = sections["5. Preemption"]
    assert "| 1 | " in preemption and "| 2 | " in preemption and "| 0 (0–0) |" in preemption  # no step redone
    assert "**failed**" not in md and "**timeout**" not in md


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.tf
@pytest.mark.timeout(1500)  # the first test to ask for quick_run runs the bench in its set-up
def test_log_followers_under_faults_lose_and_repeat_nothing(quick_run):
    """Both clouds' followers through the fault proxy, every quick schedule (503 bursts, throttling,
    a 2 s outage): every line written is shown once, no follower errs, and lines flow again after
    every fault window."""
    rows = quick_run.bench("log_faults")["rows"]
    by_schedule: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_schedule.setdefault(row["schedule"], {})[row["cloud"]] = row
    assert set(by_schedule) == {"503-bursts", "throttling", "outage-2s"}
    for schedule, clouds in by_schedule.items():
        assert set(clouds) == {"sagemaker", "vertex"}, schedule
        for row in clouds.values():
            assert row["written"] > 0 and row["lost"] == row["duplicates"] == 0 and row["errors"] == [], row
            assert row["recovery_s"] is not None and len(row["recovery_s"]["runs"]) == row["windows"], row
    for row in by_schedule["outage-2s"].values():
        assert len(row["recovery_s"]["runs"]) == 1  # lines flowed again after the one outage


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.tf
@pytest.mark.timeout(1500)  # the first test to ask for quick_run runs the bench in its set-up
def test_vertex_follower_busy_job(quick_run):
    """The busy Vertex job (2 replicas, 5 lines/s, 3 minutes on the virtual clock), every seed:
    cloudtrain polling alone loses and repeats nothing, shows lines at under a fifth of gcloud
    ml-engine's median delay, and stays under Cloud Logging's 60 reads a minute."""
    results = quick_run.bench("vertex_logs")["results"]
    busy = {(r["follower"], r["seed"]): r for r in results if r["scenario"] == "busy"}
    seeds = sorted({seed for _, seed in busy})
    assert seeds, "the busy scenario ran"
    for seed in seeds:
        ours, gcloud = busy["cloudtrain, polling alone", seed], busy["gcloud ml-engine", seed]
        assert ours["lost"] == ours["duplicates"] == 0, ours
        assert ours["delay_median_s"] < gcloud["delay_median_s"] / 5, (ours, gcloud)
        assert ours["peak_requests_in_60s"] <= 55, ours
