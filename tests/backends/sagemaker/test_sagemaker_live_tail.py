"""The SageMaker follower with CloudWatch Logs Live Tail, against moto behind the streaming fake
(tests/fakes/live_tail.py): real event-stream frames over HTTP, parsed by boto3 itself.

The fake, the job's writer and the follower share an accelerated clock, so a minute of a job
streams in seconds of real time. No assertion here is about time: what is checked is which
lines were printed, in what order, and how many calls were made for what."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from cloudtrain.backends.base import JobState, LogLine
from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.live_tail import Merge
from tests.fakes import AcceleratedClock
from tests.fakes.aws import ROLE_ARN, LogWriter, MotoAws
from tests.fakes.fault_proxy import UNAVAILABLE, FaultProxy, answer, refuse
from tests.fakes.live_tail import LiveTailFake

from .test_sagemaker_logs import _by_replica

pytestmark = pytest.mark.server
REGION = "us-east-1"


class TimedTail(LiveTailFake):
    """The streaming fake with the accelerated clock that the test's job and follower share."""

    def __init__(self, moto_endpoint: str, clock: AcceleratedClock):
        super().__init__(moto_endpoint, sleep=clock.sleep)
        self.clock = clock


@pytest.fixture
def fake_tail(aws: MotoAws, monkeypatch: pytest.MonkeyPatch):
    clock = AcceleratedClock(start=time.time(), speed=10)
    fake = TimedTail(aws.endpoint, clock)
    with fake:
        monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", fake.endpoint)
        yield fake


def _create_job(aws: MotoAws, name: str, instances: int) -> None:
    aws.client("sagemaker", REGION).create_training_job(
        TrainingJobName=name,
        AlgorithmSpecification={"TrainingImage": "tf:latest", "TrainingInputMode": "File"},
        RoleArn=ROLE_ARN,
        OutputDataConfig={"S3OutputPath": "s3://b/out"},
        ResourceConfig={"InstanceType": "ml.g4dn.xlarge", "InstanceCount": instances, "VolumeSizeInGB": 50},
        StoppingCondition={"MaxRuntimeInSeconds": 3600},
    )
    aws.set_job(REGION, name, "InProgress", "Training")


class Job:
    """Writes each instance's lines, ``per_second`` a virtual second (``bursts``: second → extra
    lines per instance), for ``seconds``; then marks the job Completed. On its own thread."""

    def __init__(
        self,
        aws: MotoAws,
        clock: AcceleratedClock,
        name: str,
        instances: int,
        seconds: int,
        per_second: int = 2,
        bursts: dict[int, int] | None = None,
        before_streams: Callable[[], None] = lambda: None,
    ):
        self.aws, self.clock, self.name = aws, clock, name
        self.instances, self.seconds, self.per_second = instances, seconds, per_second
        self.bursts = bursts or {}
        self.before_streams = before_streams
        self.written: dict[str, list[str]] = defaultdict(list)
        _create_job(aws, name, instances)
        self.writer = LogWriter(aws.client("logs", REGION), name)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            self.before_streams()
            streams = {i: self.writer.open(i) for i in range(1, self.instances + 1)}
            start = self.clock.time()
            for k in range(self.seconds):
                self.clock.sleep(start + k - self.clock.time())
                now_ms = int(self.clock.time() * 1000)
                for i, stream in streams.items():
                    replica = f"algo-{i}"
                    n = len(self.written[replica])
                    lines = [f"{replica} line {n + j}" for j in range(self.per_second + self.bursts.get(k, 0))]
                    self.writer.write(stream, lines, start_ms=now_ms)
                    self.written[replica] += lines
            self.aws.set_job(REGION, self.name, "Completed", "Completed")
        except BaseException as exc:  # shown by the test
            self.error = exc
            self.aws.set_job(REGION, self.name, "Failed", "Failed")


def _follow(job: Job, notes: list[str] | None = None, **options: Any) -> tuple[list[LogLine], Any]:
    clock = job.clock
    opts = {"wait": clock.wait, "status_seconds": 2.0, **options}
    if notes is not None:
        opts["notify"] = notes.append
    backend = SageMakerBackend(sleep=clock.sleep, clock=clock.time, tailer_options=opts)
    handle = backend.attach(job.name, region=REGION)
    job.thread.start()
    lines = list(handle.logs(follow=True))
    job.thread.join(timeout=60)
    assert job.error is None, job.error
    assert handle.wait().state is JobState.SUCCEEDED
    return lines, handle.tailer


@pytest.mark.slow
def test_sampled_dropped_and_expired_tail_sessions_still_print_every_line_once_in_order(
    aws: MotoAws, fake_tail: TimedTail
) -> None:
    """The tail samples a burst (over its limit), drops four updates of a "slow reader" (the
    service keeps ten), and its session times out and is reopened: the ground truth fills in
    every line, once, each instance's lines in order, and none needs a late mark."""
    fake_tail.max_events = 40  # 4 instances × 2 lines a second is well under; the burst at 12 s is over
    fake_tail.pauses = {20: 14.0}  # updates 20-33 are held for a "slow reader"; the oldest 4 dropped
    fake_tail.end_after = 40  # the first session "times out" after 40 updates
    job = Job(aws, fake_tail.clock, "sampled", instances=4, seconds=60, bursts={12: 30})
    lines, tailer = _follow(job)

    assert _by_replica(lines) == dict(job.written)
    assert not any(line.late for line in lines)
    assert fake_tail.sampled_away > 0 and fake_tail.dropped > 0, "the faults happened"
    assert fake_tail.calls["StartLiveTail"] >= 2  # reopened after the timeout
    assert 0 < tailer.from_tail < len(lines)  # the live view showed lines, the ground truth the rest
    assert tailer.reconciles >= 3  # the first session, the sampled update, the stall (and the second session)


@pytest.mark.slow
def test_a_stalled_tail_is_read_behind_at_once_so_the_dropped_updates_lines_are_not_late(
    aws: MotoAws, fake_tail: TimedTail
) -> None:
    """A slow reader loses the oldest updates with no word but a late, back-to-back delivery (a stall).
    With no other fault (no sampling, no new session, no single-stream checks) the dropped lines still come
    in order, none marked late: while the updates are late the tail counts as not live and every stream is
    read each round, and the stalled update itself asks for one more read before the tail's lines are shown."""
    fake_tail.pauses = {8: 14.0}  # updates 8-21 held for a slow reader; the oldest 4 dropped
    job = Job(aws, fake_tail.clock, "stalled", instances=2, seconds=40)
    lines, tailer = _follow(job, verify_seconds=1e9)
    assert fake_tail.dropped > 0, "the fault happened"
    assert _by_replica(lines) == dict(job.written)
    assert [line.message for line in lines if line.late] == []


@pytest.mark.slow
def test_lines_the_tail_loses_without_a_sign_are_shown_by_the_ground_truth_marked_late(
    aws: MotoAws, fake_tail: TimedTail
) -> None:
    """Two updates come empty though lines were ingested (nothing says so). With the single-stream
    checks turned off, the final read of every stream finds those lines: printed once, after newer
    lines of their instance, marked late (with their own timestamps); no other line is."""
    fake_tail.lose = {6, 7}
    job = Job(aws, fake_tail.clock, "silent", instances=2, seconds=20)
    lines, tailer = _follow(job, verify_seconds=1e9)
    assert sorted(line.message for line in lines) == sorted(m for ms in job.written.values() for m in ms)
    assert fake_tail.lost, "the fault happened"
    assert {line.message for line in lines if line.late} == set(fake_tail.lost)


@pytest.mark.slow
def test_a_dropped_connection_reopens_the_tail_and_loses_nothing(aws: MotoAws, fake_tail: TimedTail) -> None:
    fake_tail.cut_after = 8  # every session's connection drops after 8 updates, with no closing frame
    job = Job(aws, fake_tail.clock, "cut", instances=2, seconds=30)
    lines, tailer = _follow(job)
    assert _by_replica(lines) == dict(job.written)
    assert fake_tail.calls["StartLiveTail"] >= 3


@pytest.mark.slow
def test_without_live_tail_access_the_follower_says_so_once_and_polls(aws: MotoAws, fake_tail: TimedTail) -> None:
    fake_tail.refuse = (400, "AccessDeniedException")
    job = Job(aws, fake_tail.clock, "denied", instances=3, seconds=20)
    notes: list[str] = []
    lines, tailer = _follow(job, notes)
    assert _by_replica(lines) == dict(job.written)
    said = [n for n in notes if "Live Tail is not available" in n]
    assert len(said) == 1 and "AccessDeniedException" in said[0]
    assert fake_tail.calls["StartLiveTail"] == 1
    assert tailer.from_tail == 0 and tailer.phase_calls["poll"] > 0


@pytest.mark.slow
def test_when_every_live_tail_session_of_the_account_is_taken_it_says_so_once_and_polls(
    aws: MotoAws, fake_tail: TimedTail
) -> None:
    fake_tail.refuse = (400, "LimitExceededException")
    job = Job(aws, fake_tail.clock, "busy", instances=2, seconds=150)  # the tail asks again each minute
    notes: list[str] = []
    lines, tailer = _follow(job, notes)
    assert _by_replica(lines) == dict(job.written)
    assert fake_tail.calls["StartLiveTail"] >= 2  # refused again…
    assert sum("Live Tail session of the account is in use" in n for n in notes) == 1  # …and said once
    assert not any("not available" in n for n in notes) and tailer.from_tail == 0


def test_moto_answers_live_tail_with_a_snapshot_and_the_follower_polls_instead(
    aws: MotoAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Straight to moto: StartLiveTail gives every stored event at once and closes. That is no
    live tail; the follower says so once and reads the streams, printing each line once."""
    clock = AcceleratedClock(start=time.time(), speed=10)
    job = Job(aws, clock, "snapshot", instances=2, seconds=12)
    notes: list[str] = []
    lines, tailer = _follow(job, notes)
    assert _by_replica(lines) == dict(job.written)
    said = [n for n in notes if "Live Tail is not available" in n]
    assert len(said) == 1 and "snapshot" in said[0]


@pytest.mark.slow
@pytest.mark.parametrize("instances", [1, 8])
def test_calls_while_the_job_runs_do_not_grow_with_the_instance_count(
    aws: MotoAws, fake_tail: TimedTail, instances: int
) -> None:
    """After the first ground-truth read, while the tail is healthy, the only CloudWatch Logs
    calls are one GetLogEvents per verification tick (one stream each, in turn) — one call a
    tick at 1 instance or 8; each stream is read once more at the end. Stalls are not looked
    for here (``stall_seconds``), so that a busy test machine cannot add reads."""
    tailer_ref: list[Any] = []
    mark: dict[str, Any] = {}

    def once_reconciled() -> None:  # the streams open once the follower is live and has read the (empty) group
        while not tailer_ref or tailer_ref[0] is None or tailer_ref[0].reconciles < 1:
            time.sleep(0.01)
        tailer = tailer_ref[0]
        mark.update(calls=sum(tailer.phase_calls.values()), verifies=tailer.verifies)

    job = Job(
        aws, fake_tail.clock, f"calls-{instances}", instances=instances, seconds=40, before_streams=once_reconciled
    )
    clock = job.clock
    backend = SageMakerBackend(
        sleep=clock.sleep,
        clock=clock.time,
        tailer_options={"wait": clock.wait, "status_seconds": 2.0, "verify_seconds": 4.0, "stall_seconds": 1e9},
    )
    handle = backend.attach(job.name, region=REGION)
    logs = handle.logs(follow=True)
    tailer_ref.append(handle.tailer)
    job.thread.start()
    lines = list(logs)
    job.thread.join(timeout=60)
    assert job.error is None
    tailer = handle.tailer
    assert tailer is not None

    assert _by_replica(lines) == dict(job.written)
    running = sum(tailer.phase_calls.values()) - tailer.phase_calls["final"] - mark["calls"]
    ticks = tailer.verifies - mark["verifies"]
    assert ticks >= 3
    assert running == ticks  # one GetLogEvents a tick, whatever the instance count
    assert tailer.reconciles == 1 and fake_tail.calls["StartLiveTail"] == 1
    assert tailer.phase_calls["final"] <= 1 + 2 * instances  # one discovery page, each stream read to its end
    assert tailer.from_tail > 0


def test_merge_counts_repeated_lines_and_forgets_what_the_ground_truth_passed() -> None:
    merge = Merge(keep_ms=1000)
    merge.tracking = True
    same = {"timestamp": 5, "ingestionTime": 10, "message": "."}
    assert merge.from_tail("s", same, session=1) and merge.from_tail("s", same, session=1)  # two equal lines
    assert not merge.from_ground_truth("s", same) and not merge.from_ground_truth("s", same)
    assert merge.from_ground_truth("s", same)  # a third, only the ground truth has it
    assert not merge.from_tail("s", same, session=2)  # a new session repeating it shows nothing new
    merge.from_ground_truth("s", {"timestamp": 9, "ingestionTime": 5000, "message": "later"})
    merge.prune()
    assert ("s", 5, 10, ".") not in merge.counts and ("s", 9, 5000, "later") in merge.counts


def test_the_stream_host_prefix_is_kept_for_aws_and_left_out_for_an_endpoint_the_user_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cloudtrain.backends.sagemaker.aws import AwsClients
    from tests.fakes.aws import FAKE_CREDENTIALS

    for key in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    for key, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    aws = AwsClients("eu-west-1").logs_tail
    assert aws.meta.config.inject_host_prefix and aws.meta.endpoint_url == "https://logs.eu-west-1.amazonaws.com"
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", "http://127.0.0.1:9")
    custom = AwsClients("eu-west-1").logs_tail
    assert not custom.meta.config.inject_host_prefix and custom.meta.endpoint_url == "http://127.0.0.1:9"


@pytest.mark.slow
def test_503s_then_refused_connections_in_front_of_live_tail_lose_nothing(
    aws: MotoAws, fake_tail: TimedTail, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CloudWatch Logs (the streaming fake and moto, behind a fault proxy reached through
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS) answers 503 for 10 s, then refuses connections for 15 s,
    while the job runs: the open Live Tail session is cut, every line is printed exactly once,
    and the job's own outcome is what remains."""
    clock = fake_tail.clock
    fake_tail.quiet_errors = True
    proxy = FaultProxy(fake_tail.endpoint.removeprefix("http://"), http=True, clock=clock.time)
    proxy.after_first_request(answer(10, 20, **UNAVAILABLE), refuse(30, 45))  # seconds after the follower's first call
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", proxy.url)
    job = Job(aws, clock, "flaky-live", instances=2, seconds=60)
    notes: list[str] = []
    with proxy:
        lines, tailer = _follow(job, notes, verify_seconds=2.0)  # a ground-truth read every 2 s meets the 503s
    assert _by_replica(lines) == dict(job.written)
    assert proxy.counts["answered"] and proxy.counts["closed"] == 1  # both faults happened while it followed
    assert tailer.from_tail > 0  # the live view was in use
    assert 1 <= sum("lost the connection" in n for n in notes) == sum("is back after" in n for n in notes)


def test_a_reopened_session_repeating_a_shown_line_shows_nothing_new() -> None:
    """Each session counts its own events: a line the first session showed and the second repeats (the
    ground truth not past it yet) is not shown twice."""
    merge = Merge(keep_ms=1000)
    merge.tracking = True
    line = {"timestamp": 5, "ingestionTime": 10, "message": "saved"}
    assert merge.from_tail("s", line, session=1)
    assert not merge.from_tail("s", line, session=2)
    assert not merge.from_ground_truth("s", line)  # and the ground truth reaching it later shows nothing either


def test_pruning_keeps_what_the_ground_truth_has_not_passed() -> None:
    """A line the tail showed long ago but the ground truth has not read yet (a stream read rarely) is
    remembered however old: forgetting it would show it again when the ground truth gets there."""
    merge = Merge(keep_ms=1000)
    merge.tracking = True
    old = {"timestamp": 5, "ingestionTime": 10, "message": "epoch 1"}
    assert merge.from_tail("slow-stream", old, session=1)
    merge.from_ground_truth("other", {"timestamp": 9, "ingestionTime": 50_000, "message": "later"})
    merge.prune()
    assert ("slow-stream", 5, 10, "epoch 1") in merge.counts
    assert not merge.from_ground_truth("slow-stream", old)
