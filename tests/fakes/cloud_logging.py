"""A fake ``google.logging.v2.LoggingServiceV2`` that serves ListLogEntries.

Entries are added with the (virtual) time they become readable, so a test can make them
arrive late and out of order. It understands the filter cloudtrain sends (job id,
``timestamp>=`` and ``timestamp<``), orders by timestamp then insertId, pages by ``page_size``, and can
answer RESOURCE_EXHAUSTED (429) or UNAVAILABLE for the next N reads.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import re
import threading
from dataclasses import dataclass

import grpc
from google.cloud.logging_v2.types import ListLogEntriesRequest, ListLogEntriesResponse, LogEntry

from tests.fakes import VirtualClock, serve, unary

SERVICE = "google.logging.v2.LoggingServiceV2"
_SEVERITY = {"DEBUG": 100, "INFO": 200, "WARNING": 400, "ERROR": 500}


@dataclass
class Read:
    at: float  # virtual time of the request
    filter: str
    returned: int
    status: str = "OK"


class FakeLogging:
    def __init__(self, clock: VirtualClock | None = None):
        self.clock = clock or VirtualClock()
        self.entries: list[tuple[float, LogEntry]] = []  # (readable from, entry), as added
        self.readable: dict[str, float] = {}  # message → when it became readable
        self.faults: list[grpc.StatusCode] = []  # one per upcoming read
        self.reads: list[Read] = []
        self._index: list[tuple[dt.datetime, str, float, str, object]] = []  # sorted (ts, id, readable, job, pb)
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self.server, self.address = serve(
            SERVICE, {"ListLogEntries": unary(self._list, ListLogEntriesRequest, lambda pb: pb.SerializeToString())}
        )

    def stop(self) -> None:
        self.server.stop(grace=None)

    def add(self, job_id: str, replica: str, message: str, *, at: float, readable: float | None = None,
            severity: str = "INFO", json: bool = False, label: bool = True) -> str:
        """An entry written at ``at`` (virtual seconds) that becomes readable at ``readable``."""
        insert_id = f"id{next(self._ids):07d}"
        stamp = dt.datetime.fromtimestamp(at, dt.timezone.utc)
        entry = LogEntry(
            log_name=f"projects/p/logs/{replica}",
            resource={"type": "ml_job", "labels": {"job_id": job_id, "task_name": replica}},
            timestamp=stamp,
            insert_id=insert_id,
            severity=_SEVERITY[severity],
            labels={"ml.googleapis.com/task_name": replica} if label else {},
        )
        if json:
            entry.json_payload = {"message": message + "\n", "levelname": severity}
        else:
            entry.text_payload = message + "\n"
        readable = at if readable is None else readable
        with self._lock:
            self.entries.append((readable, entry))
            self.readable[message] = readable
            bisect.insort(self._index, (stamp, insert_id, readable, job_id, LogEntry.pb(entry)))
        return insert_id

    def _list(self, req, context):
        with self._lock:
            now = self.clock.time()
            if self.faults:
                code = self.faults.pop(0)
                self.reads.append(Read(now, req.filter, 0, code.name))
                quota = "fake: Quota exceeded for quota metric 'Read requests'"
                context.abort(code, quota if code == grpc.StatusCode.RESOURCE_EXHAUSTED else "fake: unavailable")
            assert req.order_by == "timestamp asc" and 'resource.type="ml_job"' in req.filter, req
            job = re.search(r'resource\.labels\.job_id="([^"]+)"', req.filter)
            floor = re.search(r'timestamp>="([^"]+)"', req.filter)
            ceiling = re.search(r'timestamp<"([^"]+)"', req.filter)  # gcloud's "nothing newer than 5 s"
            until = dt.datetime.fromisoformat(ceiling[1]) if ceiling else None
            first = bisect.bisect_left(self._index, (dt.datetime.fromisoformat(floor[1]),)) if floor else 0
            skip, size = int(req.page_token or 0), req.page_size or 1000
            page, more = [], False
            for stamp, _, readable, job_id, pb in itertools.islice(self._index, first, None):
                if until is not None and stamp >= until:
                    break
                if readable > now or (job and job_id != job[1]):
                    continue
                if skip:
                    skip -= 1
                    continue
                if len(page) == size:
                    more = True
                    break
                page.append(pb)
            token = str(int(req.page_token or 0) + size) if more else ""
            self.reads.append(Read(now, req.filter, len(page)))
            response = ListLogEntriesResponse.pb(ListLogEntriesResponse(next_page_token=token))
            response.entries.extend(page)
            return response


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
) -> list[str]:
    """Lines written every ``every`` s in [start, end), as a replica's logging agent ships them.

    The agent flushes every ``flush_every`` s; a batch becomes readable ``delay`` s after its
    flush (so a line is up to ``flush_every + delay`` s late), and is added in shuffled order.
    Returns the messages in the order they were written.
    """
    import math
    import random

    rng = random.Random(seed)
    lines, t, n = [], start, 0
    while t < end:
        lines.append((t, f"{replica} line {n:05d}", n))
        t, n = start + (n + 1) * every, n + 1
    rng.shuffle(shuffled := list(lines))
    for at, message, i in shuffled:
        readable = math.ceil(at / flush_every) * flush_every + delay
        fake.add(job_id, replica, message, at=at, readable=readable, json=i % 3 == 0)  # both payload kinds
    return [m for _, m, _ in lines]
