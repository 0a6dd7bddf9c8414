"""CloudWatch Logs Live Tail for one job: the live view of :mod:`.logs`.

``StartLiveTail`` (the job's log group by ARN, stream prefix ``<job>/``) answers with a ``sessionStart``, then a
``sessionUpdate`` a second. Its limits decide what the follower does: above 500 events a second an update is
``sampled``; a slow reader silently loses the oldest updates past ten (or 5,000 events), and the ones it still gets
arrive late, so an update more than ``stall_seconds`` (8) after the previous is ``stalled`` (a shorter gap cannot
have cost one, and 5,000 events in less would be sampled); a session lasts at most three hours, and what was
ingested between two sessions is in neither. So :class:`LiveTail` only reports; :class:`Merge` decides what to show
when the tail and the ground truth (:mod:`.logs`) both deliver an event."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cloudtrain.backends.follow import log
from cloudtrain.backoff import Backoff
from cloudtrain.text import first_line

from .aws import error_code

#: Answers that mean this endpoint or identity has no Live Tail: poll instead, for good.
UNSUPPORTED = frozenset(
    {
        "AccessDeniedException",
        "AccessDenied",
        "UnknownOperationException",
        "InvalidAction",
        "InvalidOperationException",
        "InvalidParameterException",
        "ValidationException",
        "NotImplemented",
        "UnsupportedOperation",
        "404",
        "405",
        "501",
    }
)


@dataclass
class TailUpdate:
    """One ``sessionUpdate`` (or, with ``start``, the start of a session)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    session: int = 0
    sampled: bool = False  # the service left events out (over 500 a second)
    stalled: bool = False  # came more than ``stall_seconds`` after the previous one: older ones may be dropped
    start: bool = False  # a session began; what was ingested before it is not in the tail


class LiveTail(threading.Thread):
    """Keeps a ``StartLiveTail`` session open on a background thread, reopening it as needed.

    ``state``: connecting → live ⇄ down, or unavailable (``reason``) when the endpoint has no Live Tail: an error
    in :data:`UNSUPPORTED`, an answer that is no event stream, or a session that ends cleanly within
    ``snapshot_seconds`` (moto sends one snapshot and closes; the service never ends a session so)."""

    def __init__(
        self,
        open_session: Callable[[], Any],
        *,
        clock: Callable[[], float],
        wait: Callable[[threading.Event, float], bool],
        wake: threading.Event,
        stall_seconds: float = 8.0,
        snapshot_seconds: float = 30.0,
        busy_retry_seconds: float = 60.0,
        backoff: Backoff | None = None,
    ):
        super().__init__(daemon=True, name="cloudtrain-live-tail")
        self.open_session, self.clock, self.wait, self.wake = open_session, clock, wait, wake
        self.stall_seconds, self.snapshot_seconds = stall_seconds, snapshot_seconds
        self.busy_retry_seconds = busy_retry_seconds
        self.backoff = backoff or Backoff()
        self.state, self.reason = "connecting", ""
        self.items: collections.deque[TailUpdate] = collections.deque()
        self.notes: collections.deque[str] = collections.deque()  # for the follower to say, once each
        self.sessions = 0
        self.last_update: float | None = None
        self.stopping = threading.Event()
        self.stream: Any = None

    def live(self, now: float) -> bool:
        """A session is open and its updates keep coming."""
        return self.state == "live" and self.last_update is not None and now - self.last_update <= self.stall_seconds

    def take(self) -> list[TailUpdate]:
        out = []
        while self.items:
            out.append(self.items.popleft())
        return out

    def stop(self) -> None:
        self.stopping.set()
        stream, self.stream = self.stream, None
        if stream is not None:
            try:
                stream.close()
            except Exception:  # already closed
                pass

    def run(self) -> None:
        failures = 0
        busy_said = False
        while not self.stopping.is_set():
            delay = 0.0
            try:
                opened = self.clock()
                self.stream = self.open_session()
                self.sessions += 1
                self._read(self.stream, self.sessions)
                if self.stopping.is_set():
                    return
                if self.clock() - opened < self.snapshot_seconds:
                    return self._unavailable("the endpoint answered with one snapshot and closed, not a live stream")
                self.state = "down"  # a clean end after a while: open a new session at once
            except Exception as exc:
                if self.stopping.is_set():
                    return
                code = error_code(exc)
                self.state = "down"
                if code == "SessionTimeoutException":  # three hours are up: a new session at once
                    failures = 0
                elif code in UNSUPPORTED or _not_a_stream(exc):
                    return self._unavailable(f"{code or type(exc).__name__}: {first_line(exc, 200)}")
                elif code == "LimitExceededException":  # the account's concurrent Live Tail sessions are taken
                    if not busy_said:
                        busy_said = True
                        self.notes.append(
                            "every CloudWatch Logs Live Tail session of the account is in use; "
                            "reading each stream until one is free"
                        )
                    delay = self.busy_retry_seconds
                else:  # no log group yet, 5xx, a dropped connection, SessionStreamingException: again, with backoff
                    log.debug("live tail interrupted: %s", exc)
                    failures += 1
                    delay = self.backoff.delay(failures)
            finally:
                self.stream = None
            self.wake.set()
            if delay:
                self.wait(self.stopping, delay)

    def _read(self, stream: Any, session: int) -> None:
        for event in stream:
            if self.stopping.is_set():
                return
            now = self.clock()
            if "sessionStart" in event:
                self.state, self.last_update = "live", now
                self.items.append(TailUpdate(session=session, start=True))
            elif "sessionUpdate" in event:
                update = event["sessionUpdate"]
                stalled = self.last_update is not None and now - self.last_update > self.stall_seconds
                self.last_update = now
                self.items.append(
                    TailUpdate(
                        update.get("sessionResults") or [],
                        session,
                        bool((update.get("sessionMetadata") or {}).get("sampled")),
                        stalled,
                    )
                )
            self.wake.set()

    def _unavailable(self, reason: str) -> None:
        self.state, self.reason = "unavailable", reason
        self.wake.set()


def _not_a_stream(exc: BaseException) -> bool:
    """The answer was no event stream at all (a proxy, an emulator without the operation)."""
    from botocore.eventstream import ParserError
    from botocore.parsers import ResponseParserError

    return isinstance(exc, (ParserError, ResponseParserError))


def session_opener(logs: Any, tail_client: Any, group: str, prefix: str) -> Callable[[], Any]:
    """``StartLiveTail`` for the streams under ``prefix``; its event stream. The log group is
    named by ARN (the API takes nothing else), asked once with ``DescribeLogGroups``."""
    arn: list[str] = []

    def open_session() -> Any:
        if not arn:
            page = logs.describe_log_groups(logGroupNamePrefix=group)
            found = [g for g in page.get("logGroups", []) if g.get("logGroupName") == group]
            if not found:
                raise LookupError(f"no log group {group} yet")  # retried with backoff
            arn.append(found[0].get("logGroupArn") or found[0]["arn"].removesuffix(":*"))
        answer = tail_client.start_live_tail(logGroupIdentifiers=arn[:1], logStreamNamePrefixes=[prefix])
        return answer["responseStream"]

    return open_session


class Merge:
    """Each event shown once, whichever read brings it first.

    Neither read gives an event id, so an event is known by (stream, timestamp, ingestion time, message) and
    *counted*: a stream may hold the same line twice in one millisecond. Each read delivers an event at most once
    (per tail session), so an event is new when one read's count passes what the other (or an earlier session)
    reached. Keys the ground truth passed, ``keep_ms`` older than the newest ingestion seen, are forgotten."""

    def __init__(self, keep_ms: int = 300_000):
        self.keep_ms = keep_ms
        self.tracking = False  # only while a tail runs: polling alone needs no memory
        self.counts: dict[tuple[str, int, int | None, str], list[int]] = {}  # → [truth, tail best, session, in session]
        self.newest_ingest = 0
        self._pruned_at = 0

    def from_tail(self, stream: str, event: dict[str, Any], session: int) -> bool:
        key = (stream, event["timestamp"], event.get("ingestionTime"), event["message"])
        self.newest_ingest = max(self.newest_ingest, event.get("ingestionTime") or 0)
        c = self.counts.setdefault(key, [0, 0, session, 0])
        if c[2] != session:
            c[2], c[3] = session, 0
        c[3] += 1
        new = c[3] > max(c[0], c[1])
        c[1] = max(c[1], c[3])
        return new

    def from_ground_truth(self, stream: str, event: dict[str, Any]) -> bool:
        if not self.tracking:
            return True
        key = (stream, event["timestamp"], event.get("ingestionTime"), event["message"])
        self.newest_ingest = max(self.newest_ingest, event.get("ingestionTime") or 0)
        c = self.counts.setdefault(key, [0, 0, 0, 0])
        c[0] += 1
        return c[0] > c[1]

    def prune(self) -> None:
        if self.newest_ingest - self._pruned_at < self.keep_ms // 10:  # a scan every tenth of keep_ms at most
            return
        self._pruned_at = self.newest_ingest
        horizon = self.newest_ingest - self.keep_ms
        for key in [k for k, c in self.counts.items() if (k[2] or 0) < horizon and c[0] >= c[1]]:
            del self.counts[key]
