"""A fake ``google.logging.v2.LoggingServiceV2``: ListLogEntries and TailLogEntries.

Entries are added with the (virtual) time Cloud Logging receives them — ``readable``, which
is also their ``receiveTimestamp`` — so a test can make them arrive minutes late (the
lateness knob: ``readable - at``), out of order, and twice (``add(..., insert_id=…)`` again).
``received`` stamps another ``receiveTimestamp`` than the arrival: a logging frontend whose
clock runs behind another's, so an entry that arrives now can carry a receive time older than
the newest one a reader has seen (``receiveTimestamp`` filters use the stamp, as Cloud Logging's do).

* **ListLogEntries** understands the filter cloudtrain sends (job id, ``receiveTimestamp>=``)
  and gcloud's (``timestamp>=``, ``timestamp<``), orders by timestamp then insertId, pages by
  ``page_size`` with a position token, and shows an entry ``list_lag`` seconds after it is
  received (Cloud Logging's indexing lag). ``faults``: RESOURCE_EXHAUSTED or UNAVAILABLE for
  the next reads.
* **TailLogEntries** streams entries received after the session opened, one response per
  poll of the clock, each sorted by timestamp, held ``buffer_window`` seconds. It answers
  ``UNIMPLEMENTED`` when ``tail_mode == "unimplemented"`` (as proxies and emulators do);
  ``suppress_next = n`` drops the next n entries and says so in ``suppression_info``;
  ``break_tails()`` ends every open stream with UNAVAILABLE.

``outages`` and ``throttled`` are windows of the clock in which every call (list, tail open,
open tails) fails with UNAVAILABLE or RESOURCE_EXHAUSTED: Cloud Logging's 503 and 429. A
refused or dropped connection is a fault proxy's job (tests/fakes/fault_proxy.py).
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import re
import threading
import time
from dataclasses import dataclass

import grpc
from google.cloud.logging_v2.types import (
    ListLogEntriesRequest,
    ListLogEntriesResponse,
    LogEntry,
    TailLogEntriesRequest,
    TailLogEntriesResponse,
)

from tests.fakes import VirtualClock, serve, stream_stream, unary

SERVICE = "google.logging.v2.LoggingServiceV2"
_SEVERITY = {"DEBUG": 100, "INFO": 200, "WARNING": 400, "ERROR": 500}


@dataclass
class Read:
    at: float  # virtual time of the request
    filter: str
    returned: int
    status: str = "OK"


def _when(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


class FakeLogging:
    def __init__(self, clock=None, *, list_lag: float = 0.0, tail_mode: str = "on"):
        self.clock = clock or VirtualClock()
        self.list_lag = list_lag
        self.tail_mode = tail_mode  # "on" or "unimplemented"
        self.suppress_next = 0
        self.entries: list[tuple[float, LogEntry]] = []  # (readable from, entry), as added
        self.readable: dict[str, float] = {}  # message → when it was first received
        self.faults: list[grpc.StatusCode] = []  # one per upcoming list read
        self.reads: list[Read] = []
        self.tail_sessions = 0
        self.tail_opened: list[float] = []  # virtual times tail sessions opened
        self.tail_sent = 0  # entries sent on tails
        self.suppressed = 0  # entries dropped from tails
        self.suppressed_messages: list[str] = []
        self.outages: list[tuple[float, float]] = []  # (from, to) virtual times: every call UNAVAILABLE
        self.throttled: list[tuple[float, float]] = []  # (from, to): every call RESOURCE_EXHAUSTED
        self._index: list[tuple] = []  # sorted (timestamp, insertId, seq): for timestamp filters
        self._received: list[tuple] = []  # sorted (readable, seq): for tails
        self._stamped: list[tuple] = []  # sorted (receiveTimestamp, seq): for receiveTimestamp filters
        self._items: dict[int, tuple[dt.datetime, str, float, str, object]] = {}  # seq → (ts, id, readable, job, pb)
        self._ids = itertools.count()
        self._seq = itertools.count()
        self._generation = 0
        self._lock = threading.Lock()
        self.server, self.address = serve(
            SERVICE,
            {
                "ListLogEntries": unary(self._list, ListLogEntriesRequest, lambda pb: pb.SerializeToString()),
                "TailLogEntries": stream_stream(self._tail, TailLogEntriesRequest, lambda pb: pb.SerializeToString()),
            },
        )

    def stop(self) -> None:
        self._generation += 1
        self.server.stop(grace=None)

    def add(
        self,
        job_id: str,
        replica: str,
        message: str,
        *,
        at: float,
        readable: float | None = None,
        severity: str = "INFO",
        json: bool = False,
        label: bool = True,
        insert_id: str | None = None,
        received: float | None = None,
    ) -> str:
        """An entry written at ``at`` (virtual seconds) that Cloud Logging receives at ``readable``.

        Passing the ``insert_id`` of an earlier entry delivers that entry again (a duplicate)."""
        insert_id = insert_id or f"id{next(self._ids):07d}"
        stamp = dt.datetime.fromtimestamp(at, dt.timezone.utc)
        readable = at if readable is None else readable
        received = readable if received is None else received
        entry = LogEntry(
            log_name=f"projects/p/logs/{replica}",
            resource={"type": "ml_job", "labels": {"job_id": job_id, "task_name": replica}},
            timestamp=stamp,
            receive_timestamp=dt.datetime.fromtimestamp(received, dt.timezone.utc),
            insert_id=insert_id,
            severity=_SEVERITY[severity],
            labels={"ml.googleapis.com/task_name": replica} if label else {},
        )
        if json:
            entry.json_payload = {"message": message + "\n", "levelname": severity}
        else:
            entry.text_payload = message + "\n"
        with self._lock:
            seq = next(self._seq)
            self.entries.append((readable, entry))
            self.readable.setdefault(message, readable)
            self._items[seq] = (stamp, insert_id, readable, job_id, LogEntry.pb(entry))
            bisect.insort(self._index, (stamp, insert_id, seq))
            bisect.insort(self._received, (readable, seq))
            bisect.insort(self._stamped, (received, seq))
        return insert_id

    # -- ListLogEntries ---------------------------------------------------------------

    def _list(self, req, context):
        with self._lock:
            now = self.clock.time()
            if any(a <= now < b for a, b in self.outages):
                self.faults.insert(0, grpc.StatusCode.UNAVAILABLE)
            elif any(a <= now < b for a, b in self.throttled):
                self.faults.insert(0, grpc.StatusCode.RESOURCE_EXHAUSTED)
            if self.faults:
                code = self.faults.pop(0)
                self.reads.append(Read(now, req.filter, 0, code.name))
                quota = "fake: Quota exceeded for quota metric 'Read requests'"
                context.abort(code, quota if code == grpc.StatusCode.RESOURCE_EXHAUSTED else "fake: unavailable")
            assert req.order_by == "timestamp asc" and 'resource.type="ml_job"' in req.filter, req
            job = re.search(r'resource\.labels\.job_id="([^"]+)"', req.filter)
            floor = re.search(r'(?<!receive)[Tt]imestamp>="([^"]+)"', req.filter)
            ceiling = re.search(r'(?<!receive)[Tt]imestamp<"([^"]+)"', req.filter)  # gcloud's "nothing newer than 5 s"
            received = re.search(r'receiveTimestamp>="([^"]+)"', req.filter)
            lo = _when(floor[1]) if floor else None
            hi = _when(ceiling[1]) if ceiling else None
            if received:  # entries stamped from the floor on, listable by now (below), in timestamp order
                r_floor = _when(received[1]).timestamp()
                seqs = [s for _, s in self._stamped[bisect.bisect_left(self._stamped, (r_floor,)) :]]
                candidates = sorted((self._items[s][0], self._items[s][1], s) for s in seqs)
            else:
                candidates = self._index[bisect.bisect_left(self._index, (lo,)) if lo else 0 :]
            after = tuple(req.page_token.split("|", 2)) if req.page_token else None
            size = req.page_size or 1000
            page: list[tuple[dt.datetime, str, int, object]] = []
            more = False
            for stamp, insert_id, seq in candidates:
                _, _, readable, job_id, pb = self._items[seq]
                if hi is not None and stamp >= hi:
                    break
                if (lo is not None and stamp < lo) or readable + self.list_lag > now or (job and job_id != job[1]):
                    continue
                if after and (stamp.isoformat(), insert_id, f"{seq:09d}") <= after:
                    continue
                if len(page) == size:
                    more = True
                    break
                page.append((stamp, insert_id, seq, pb))
            token = "|".join((page[-1][0].isoformat(), page[-1][1], f"{page[-1][2]:09d}")) if more else ""
            self.reads.append(Read(now, req.filter, len(page)))
            response = ListLogEntriesResponse.pb(ListLogEntriesResponse(next_page_token=token))
            response.entries.extend(pb for *_, pb in page)
            return response

    # -- TailLogEntries ---------------------------------------------------------------

    def break_tails(self) -> None:
        """End every open tail stream with UNAVAILABLE, as a dropped connection does."""
        self._generation += 1

    def _window_fault(self, context, unavailable: str) -> None:
        now = self.clock.time()
        if any(a <= now < b for a, b in self.outages):
            context.abort(grpc.StatusCode.UNAVAILABLE, unavailable)
        if any(a <= now < b for a, b in self.throttled):
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "fake: Quota exceeded for quota metric 'Read requests'")

    def _tail(self, requests, context):
        if self.tail_mode == "unimplemented":
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "fake: Method not found: TailLogEntries")
        req = next(requests)
        job = re.search(r'resource\.labels\.job_id="([^"]+)"', req.filter)
        window = req.buffer_window.total_seconds() if req.buffer_window else 2.0
        generation = self._generation
        self._window_fault(context, "fake: unavailable")
        with self._lock:
            self.tail_sessions += 1
            self.tail_opened.append(self.clock.time())
            cursor = (self.clock.time(), float("inf"))  # only entries received from now on
        yield TailLogEntriesResponse.pb(TailLogEntriesResponse())  # the session is open
        while context.is_active():
            if generation != self._generation:
                context.abort(grpc.StatusCode.UNAVAILABLE, "fake: connection reset")
            self._window_fault(context, "fake: connection reset")
            with self._lock:
                now = self.clock.time()
                first = bisect.bisect_right(self._received, cursor)
                last = bisect.bisect_right(self._received, (now - window, float("inf")))
                due = self._received[first:last]
                if due:
                    cursor = due[-1]
                items = [self._items[s] for _, s in due]
                items = [it for it in items if not job or it[3] == job[1]]
                dropped = min(self.suppress_next, len(items))
                self.suppress_next -= dropped
                self.suppressed += dropped
                self.suppressed_messages += [_message(it[4]) for it in items[:dropped]]
                items = sorted(items[dropped:], key=lambda it: (it[0], it[1]))
                self.tail_sent += len(items)
            if items or dropped:
                response = TailLogEntriesResponse.pb(TailLogEntriesResponse())
                response.entries.extend(it[4] for it in items)
                if dropped:
                    info = response.suppression_info.add()
                    info.reason, info.suppressed_count = 1, dropped  # RATE_LIMIT
                yield response
            time.sleep(0.002)


def _message(pb) -> str:
    return (pb.text_payload or pb.json_payload.fields["message"].string_value).rstrip("\n")


def write_lines(
    fake: FakeLogging,
    job_id: str,
    replica: str,
    *,
    start: float,
    end: float,
    every: float,
    flush_every: float = 5.0,
    delay: float = 2.0,
    seed: int = 0,
    lateness=None,
) -> list[str]:
    """Lines written every ``every`` s in [start, end), as a replica's logging agent ships them.

    The agent flushes every ``flush_every`` s; a batch becomes readable ``delay`` s after its
    flush, plus ``lateness(rng)`` seconds when given (a batch held back: minutes, at worst),
    and is added in shuffled order. Returns the messages in the order they were written.
    """
    import math
    import random

    rng = random.Random(seed)
    lines, t, n = [], start, 0
    while t < end:
        lines.append((t, f"{replica} line {n:05d}", n))
        t, n = start + (n + 1) * every, n + 1
    held: dict[int, float] = {}
    rng.shuffle(shuffled := list(lines))
    for at, message, i in shuffled:
        batch = math.ceil(at / flush_every)
        if batch not in held:
            held[batch] = lateness(rng) if lateness else 0.0
        readable = batch * flush_every + delay + held[batch]
        fake.add(job_id, replica, message, at=at, readable=readable, json=i % 3 == 0)  # both payload kinds
    return [m for _, m, _ in lines]
