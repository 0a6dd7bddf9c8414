"""The CloudWatch tailer against moto: every line once, in order per instance, late streams, throttling, the end."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber

from cloudtrain.backends.base import JobState, LogLine
from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.aws import AwsClients
from cloudtrain.backends.sagemaker.logs import LOG_GROUP, LogTailer, replica_name
from tests.fakes.aws import ROLE_ARN, LogWriter, MotoAws
from tests.fakes.fault_proxy import UNAVAILABLE, FaultProxy, answer, refuse

pytestmark = pytest.mark.server


class FakeTime:
    """An injectable clock: ``sleep`` moves time on and lets the world take its next step."""

    def __init__(self, on_sleep: Callable[[float], None] = lambda s: None):
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.on_sleep = on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        self.on_sleep(seconds)


def _create_job(aws: MotoAws, name: str, region: str = "us-east-1", instances: int = 1, spot: bool = False) -> None:
    params: dict[str, Any] = {
        "TrainingJobName": name,
        "AlgorithmSpecification": {"TrainingImage": "tf:latest", "TrainingInputMode": "File"},
        "RoleArn": ROLE_ARN,
        "OutputDataConfig": {"S3OutputPath": "s3://b/out"},
        "ResourceConfig": {"InstanceType": "ml.g4dn.xlarge", "InstanceCount": instances, "VolumeSizeInGB": 50},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600, **({"MaxWaitTimeInSeconds": 7200} if spot else {})},
    }
    if spot:
        params["EnableManagedSpotTraining"] = True
    aws.client("sagemaker", region).create_training_job(**params)
    aws.set_job(region, name, "InProgress", "Starting")


def _attach(name: str, fake: FakeTime, region: str = "us-east-1", **tailer):
    backend = SageMakerBackend(sleep=fake.sleep, clock=fake.clock, tailer_options=tailer)
    return backend.attach(name, region=region)


def _by_replica(lines: list[LogLine]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        out[line.replica].append(line.message)
    return dict(out)


@pytest.mark.slow
def test_60_instances_1000_lines_each_late_streams_every_line_once_in_order(aws: MotoAws) -> None:
    """Streams open over four rounds (discovery pages past 50), 250 lines a step each; the
    last lines of 15 streams land after the job is Completed and only the final read sees them."""
    name, instances, per_step, total = "big", 60, 250, 1000
    _create_job(aws, name, instances=instances)
    writer = LogWriter(aws.client("logs", "us-east-1"), name)
    streams: dict[int, str] = {}
    written: dict[int, int] = defaultdict(int)
    steps = itertools.count()
    t0 = _now_ms()

    after_completed: list[str] = []

    def step(_seconds: float) -> None:
        k = next(steps)
        if k == 0:
            aws.set_job("us-east-1", name, "InProgress", "Training")
        if k == 6:  # the last quarter of the late streams is still unwritten
            aws.set_job("us-east-1", name, "Completed", "Completed")
            return
        for i in range(1, instances + 1):
            if k >= i % 4 and i not in streams:
                streams[i] = writer.open(i)
            if i in streams and written[i] < total:
                lines = [f"algo-{i} line {n}" for n in range(written[i], written[i] + per_step)]
                writer.write(streams[i], lines, start_ms=t0 + written[i])  # 1 ms apart, per stream
                written[i] += per_step
                if k > 6:
                    after_completed.extend(lines)

    fake = FakeTime(step)
    job = _attach(name, fake, poll_seconds=2.0, status_seconds=2.0)
    lines = list(job.logs(follow=True))

    got = _by_replica(lines)
    assert sorted(got) == sorted(f"algo-{i}" for i in range(1, instances + 1))
    for i in range(1, instances + 1):
        assert got[f"algo-{i}"] == [f"algo-{i} line {n}" for n in range(total)], f"algo-{i}"
    assert len(lines) == instances * total
    assert len(after_completed) == 15 * per_step  # written during the grace, caught by the final read
    assert job.wait().state is JobState.SUCCEEDED
    calls = job.tailer.calls
    assert calls["describe_log_streams"] >= 2  # 60 streams: two pages per discovery
    # 60 streams at 10 calls/s: rounds are paced to at least 6 s.
    assert max(fake.sleeps) >= 6.0


def _now_ms() -> int:
    import time

    return int(time.time() * 1000) - 60_000


def test_a_stream_is_printed_as_soon_as_it_appears_without_waiting_for_the_others(aws: MotoAws) -> None:
    _create_job(aws, "early", instances=4)
    aws.set_job("us-east-1", "early", "InProgress", "Training")
    writer = LogWriter(aws.client("logs", "us-east-1"), "early")
    writer.write(writer.open(2), ["first from algo-2"], start_ms=_now_ms())
    job = _attach("early", FakeTime())
    first = next(job.logs(follow=True))
    assert (first.replica, first.message) == ("algo-2", "first from algo-2")


def test_follow_waits_for_the_log_group_to_exist(aws: MotoAws) -> None:
    _create_job(aws, "nogroup")
    logs = aws.client("logs", "us-east-1")
    steps = itertools.count()

    def step(_s: float) -> None:
        k = next(steps)
        if k == 2:
            writer = LogWriter(logs, "nogroup")
            writer.write(writer.open(1), ["hello"], start_ms=_now_ms())
            aws.set_job("us-east-1", "nogroup", "Completed", "Completed")

    fake = FakeTime(step)
    job = _attach("nogroup", fake, status_seconds=0)
    assert [line.message for line in job.logs(follow=True)] == ["hello"]


def test_lines_of_one_round_merge_by_timestamp(aws: MotoAws) -> None:
    _create_job(aws, "merge", instances=2)
    aws.set_job("us-east-1", "merge", "Completed", "Completed")
    writer = LogWriter(aws.client("logs", "us-east-1"), "merge")
    t0 = _now_ms()
    a, b = writer.open(1), writer.open(2)
    writer.write(a, ["a0", "a2", "a4"], start_ms=t0, step_ms=20)
    writer.write(b, ["b1", "b3"], start_ms=t0 + 10, step_ms=20)
    job = _attach("merge", FakeTime())
    assert [(line.replica, line.message) for line in job.logs()] == [
        ("algo-1", "a0"),
        ("algo-2", "b1"),
        ("algo-1", "a2"),
        ("algo-2", "b3"),
        ("algo-1", "a4"),
    ]


def _throttle_every(client, every: dict[str, int]) -> list[str]:
    """Answer every n-th call of each operation with a real 400 ThrottlingException response."""
    counts: dict[str, itertools.count] = {op: itertools.count(1) for op in every}
    throttled: list[str] = []

    def before_send(request, **kwargs):
        operation = request.headers.get("X-Amz-Target", b"").decode().split(".")[-1]
        if operation in every and next(counts[operation]) % every[operation] == 0:
            throttled.append(operation)
            body = json.dumps({"__type": "ThrottlingException", "message": "Rate exceeded"}).encode()
            return AWSResponse(request.url, 400, {"Content-Type": "application/x-amz-json-1.1"}, _Raw(body))
        return None

    client.meta.events.register("before-send.logs", before_send)
    return throttled


class _Raw:
    def __init__(self, body: bytes):
        self.body = body

    def stream(self, **kwargs):
        yield self.body


def test_throttling_backs_off_and_loses_nothing(aws: MotoAws) -> None:
    _create_job(aws, "throttled", instances=3)
    writer = LogWriter(aws.client("logs", "us-east-1"), "throttled")
    names = [writer.open(i) for i in (1, 2, 3)]
    rounds = itertools.count()

    def step(_s: float) -> None:
        k = next(rounds)
        if k < 8:
            for i, stream in enumerate(names, start=1):
                writer.write(stream, [f"{i}:{k}:{n}" for n in range(5)], start_ms=_now_ms() + k * 10)
        elif k == 8:
            aws.set_job("us-east-1", "throttled", "Completed", "Completed")

    fake = FakeTime(step)
    clients = AwsClients("us-east-1")
    throttled = _throttle_every(clients.logs, {"GetLogEvents": 3, "DescribeLogStreams": 2})
    backend = SageMakerBackend(
        clients=lambda region: clients, sleep=fake.sleep, clock=fake.clock, tailer_options={"status_seconds": 0}
    )
    job = backend.attach("throttled", region="us-east-1")
    lines = list(job.logs(follow=True))

    assert job.tailer is not None
    assert throttled and job.tailer.throttled == len(throttled)
    assert {"GetLogEvents", "DescribeLogStreams"} <= set(throttled)
    got = _by_replica(lines)
    for i in (1, 2, 3):
        assert got[f"algo-{i}"] == [f"{i}:{k}:{n}" for k in range(8) for n in range(5)]
    assert 1.0 in fake.sleeps  # the first backoff step


def test_throttling_backoff_doubles_up_to_a_cap() -> None:
    class Throttled(Exception):
        response = {"Error": {"Code": "ThrottlingException"}}

    class Client:
        calls = 0

        def describe_log_streams(self, **kwargs):
            Client.calls += 1
            if Client.calls <= 7:
                raise Throttled()
            return {"logStreams": []}

    fake = FakeTime()
    tailer = LogTailer(Client(), "j", job_done=lambda: True, sleep=fake.sleep, clock=fake.clock)
    assert list(tailer.read()) == []
    assert fake.sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_an_empty_page_with_a_new_token_is_read_on_and_the_same_token_means_the_end() -> None:
    import boto3

    client = boto3.client("logs", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    base = {"logGroupName": LOG_GROUP, "logStreamName": "j/algo-1-1", "startFromHead": True}
    with Stubber(client) as stub:
        stub.add_response(
            "describe_log_streams",
            {"logStreams": [{"logStreamName": "j/algo-1-1"}]},
            {"logGroupName": LOG_GROUP, "logStreamNamePrefix": "j/"},
        )
        stub.add_response("get_log_events", {"events": [], "nextForwardToken": "f/1"}, base)
        stub.add_response(
            "get_log_events",
            {"events": [{"timestamp": 5, "message": "x\n"}], "nextForwardToken": "f/2"},
            {**base, "nextToken": "f/1"},
        )
        stub.add_response("get_log_events", {"events": [], "nextForwardToken": "f/2"}, {**base, "nextToken": "f/2"})
        tailer = LogTailer(client, "j", job_done=lambda: True, sleep=lambda s: None)
        assert [(line.replica, line.message) for line in tailer.read()] == [("algo-1", "x")]
        stub.assert_no_pending_responses()


BIG = "y" * 950_000  # one event that fills a page by bytes (1 MB a page, read on from 90 %)


@pytest.mark.parametrize("first", [[], [{"timestamp": 4, "message": BIG}]], ids=["empty", "full"])
def test_while_following_an_empty_or_full_page_is_read_on_in_the_same_round(first) -> None:
    """The service may answer an empty page with a new token while more is stored, and a full page
    means more: the polling round reads on at once (the stubbed calls are strict: a round that stopped
    there would read f/1 again after the job ended, and show the line a round late)."""
    import boto3

    client = boto3.client("logs", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    base = {"logGroupName": LOG_GROUP, "logStreamName": "j/algo-1-1", "startFromHead": True}
    prefix = {"logGroupName": LOG_GROUP, "logStreamNamePrefix": "j/"}
    done = iter([False, True])
    with Stubber(client) as stub:
        stub.add_response("describe_log_streams", {"logStreams": [{"logStreamName": "j/algo-1-1"}]}, prefix)
        stub.add_response("get_log_events", {"events": first, "nextForwardToken": "f/1"}, base)
        stub.add_response(
            "get_log_events",
            {"events": [{"timestamp": 5, "message": "x\n"}], "nextForwardToken": "f/2"},
            {**base, "nextToken": "f/1"},
        )
        stub.add_response("describe_log_streams", {"logStreams": [{"logStreamName": "j/algo-1-1"}]}, prefix)  # final
        stub.add_response("get_log_events", {"events": [], "nextForwardToken": "f/2"}, {**base, "nextToken": "f/2"})
        tailer = LogTailer(client, "j", job_done=lambda: next(done), sleep=lambda s: None, status_seconds=0)
        assert [(line.replica, line.message) for line in tailer.follow()] == [
            ("algo-1", m["message"]) for m in first
        ] + [("algo-1", "x")]
        stub.assert_no_pending_responses()


def test_a_restarted_containers_new_stream_is_found_while_the_job_runs() -> None:
    """Once every instance has a stream, streams are still looked for every ``rediscover_seconds``: a
    restarted container opens a new one, and its lines are shown while the job runs, not only at the end."""
    import boto3

    client = boto3.client("logs", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    prefix = {"logGroupName": LOG_GROUP, "logStreamNamePrefix": "j/"}
    first, second = "j/algo-1-100", "j/algo-1-200"

    def read(stream: str, token: str | None = None) -> dict:
        return {
            "logGroupName": LOG_GROUP,
            "logStreamName": stream,
            "startFromHead": True,
            **({"nextToken": token} if token else {}),
        }

    done = iter([False, False, True])
    with Stubber(client) as stub:
        stub.add_response("describe_log_streams", {"logStreams": [{"logStreamName": first}]}, prefix)
        stub.add_response(
            "get_log_events",
            {"events": [{"timestamp": 1, "message": "before"}], "nextForwardToken": "a/1"},
            read(first),
        )
        both = {"logStreams": [{"logStreamName": first}, {"logStreamName": second}]}
        stub.add_response("describe_log_streams", both, prefix)  # the second round looks again
        stub.add_response("get_log_events", {"events": [], "nextForwardToken": "a/1"}, read(first, "a/1"))
        stub.add_response(
            "get_log_events",
            {"events": [{"timestamp": 2, "message": "after restart"}], "nextForwardToken": "b/1"},
            read(second),
        )
        stub.add_response("describe_log_streams", both, prefix)  # the final read
        stub.add_response("get_log_events", {"events": [], "nextForwardToken": "a/1"}, read(first, "a/1"))
        stub.add_response("get_log_events", {"events": [], "nextForwardToken": "b/1"}, read(second, "b/1"))
        tailer = LogTailer(
            client, "j", job_done=lambda: next(done), sleep=lambda s: None, status_seconds=0, rediscover_seconds=0
        )
        assert [line.message for line in tailer.follow()] == ["before", "after restart"]
        stub.assert_no_pending_responses()


def test_a_failed_job_ends_the_logs_with_its_reason_and_exit_code(aws: MotoAws) -> None:
    _create_job(aws, "boom", instances=1)
    aws.set_job("us-east-1", "boom", "InProgress", "Training")
    writer = LogWriter(aws.client("logs", "us-east-1"), "boom")
    stream = writer.open(1)
    reason = "AlgorithmError: ExecuteUserScriptError: exit code 3: ValueError: bad batch size"
    rounds = itertools.count()

    def step(_s: float) -> None:
        k = next(rounds)
        if k == 0:
            writer.write(
                stream, ["Traceback (most recent call last):", "ValueError: bad batch size"], start_ms=_now_ms()
            )
        if k == 1:
            aws.set_job("us-east-1", "boom", "Failed", "Failed", failure_reason=reason)

    job = _attach("boom", FakeTime(step), status_seconds=0)
    assert [line.message for line in job.logs(follow=True)][-1] == "ValueError: bad batch size"
    status = job.wait()
    assert status.state is JobState.FAILED and status.message == reason
    assert status.native_state == "Failed" and status.state.exit_code == 1


def test_spot_savings_and_billable_seconds_at_the_end(aws: MotoAws) -> None:
    _create_job(aws, "spot", instances=2, spot=True)
    aws.set_job("us-east-1", "spot", "Completed", "Completed", training_seconds=1000, billable_seconds=300)
    status = _attach("spot", FakeTime()).wait()
    assert status.state is JobState.SUCCEEDED and status.state.exit_code == 0
    assert status.details["training_seconds"] == 2000 and status.details["billable_seconds"] == 600
    assert status.details["spot_savings_percent"] == 70.0


def test_replica_names() -> None:
    assert replica_name("job/algo-1-1700000000") == "algo-1"
    assert replica_name("job/algo-12-1700000000") == "algo-12"
    assert replica_name("job/other") == "other"


def test_503s_and_refused_connections_while_the_job_runs_lose_nothing_and_keep_its_exit_code(
    aws: MotoAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CloudWatch Logs (moto behind a fault proxy, reached through AWS_ENDPOINT_URL_CLOUDWATCH_LOGS)
    answers 503 for 10 s, then refuses connections for 15 s, while the job runs: every line is
    printed exactly once, one line says the connection is lost and one that it is back (per
    outage), and the job's own outcome (failed: 1) is what remains."""
    _create_job(aws, "flaky", instances=2)
    writer = LogWriter(aws.client("logs", "us-east-1"), "flaky")
    names = [writer.open(i) for i in (1, 2)]
    rounds = itertools.count()

    def step(_s: float) -> None:
        k = next(rounds)
        if k < 30:
            for i, stream in enumerate(names, start=1):
                writer.write(stream, [f"{i}:{k}:{n}" for n in range(3)], start_ms=_now_ms() + k * 10)
        elif k == 30:
            aws.set_job("us-east-1", "flaky", "Failed", "Failed", failure_reason="exit code 3")

    fake = FakeTime(step)
    t0 = fake.now
    proxy = FaultProxy(aws.endpoint.removeprefix("http://"), http=True, clock=fake.clock)
    proxy.schedule(answer(t0 + 10, t0 + 20, **UNAVAILABLE), refuse(t0 + 30, t0 + 45))
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", proxy.url)
    notes: list[str] = []
    backend = SageMakerBackend(
        sleep=fake.sleep, clock=fake.clock, tailer_options={"status_seconds": 0, "notify": notes.append}
    )
    with proxy:
        job = backend.attach("flaky", region="us-east-1")
        lines = list(job.logs(follow=True))

    assert proxy.counts["answered"] and proxy.counts["closed"]  # the faults happened while it followed
    got = _by_replica(lines)
    for i in (1, 2):
        assert got[f"algo-{i}"] == [f"{i}:{k}:{n}" for k in range(30) for n in range(3)]
    assert job.tailer is not None
    outages = job.tailer.outage.outages  # two, or one when a jittered backoff spans the gap between them
    assert outages in (1, 2)
    assert sum("lost the connection to CloudWatch Logs" in n for n in notes) == outages
    assert sum("is back after" in n for n in notes) == outages
    assert job.wait().state.exit_code == 1
