"""The Cloud Logging side of the Vertex follower: ``entries.list`` pages and the ``TailLogEntries`` stream.

Both go through ``logging_v2``'s ``LoggingServiceV2Client`` with no client-side retries:
the follower retries, so that it knows where it stands. Entries come back as :class:`Entry`."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cloudtrain.backends.vertex.settings import grpc_transport

TASK_LABEL = "ml.googleapis.com/task_name"
_SEVERITY = {  # google.logging.type.LogSeverity; DEFAULT (0) reads as INFO
    0: "INFO",
    100: "DEBUG",
    200: "INFO",
    300: "NOTICE",
    400: "WARNING",
    500: "ERROR",
    600: "CRITICAL",
    700: "ALERT",
    800: "EMERGENCY",
}


@dataclass(frozen=True)
class Entry:
    """What the follower needs of a Cloud Logging ``LogEntry``."""

    timestamp: dt.datetime
    insert_id: str
    replica: str
    severity: str
    message: str
    receive: dt.datetime | None = None  # receiveTimestamp: when Cloud Logging received it


@dataclass(frozen=True)
class TailBatch:
    """One ``TailLogEntriesResponse``: its entries, and how many the server dropped before it."""

    entries: list[Entry]
    suppressed: int = 0


def stamp(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def job_filter(job_id: str) -> str:
    return f'resource.type="ml_job" AND resource.labels.job_id="{job_id}"'


def log_filter(job_id: str, floor: dt.datetime) -> str:
    """The ground-truth read: everything Cloud Logging received from ``floor`` on."""
    return f'{job_filter(job_id)} AND receiveTimestamp>="{stamp(floor)}"'


def to_entry(pb: Any) -> Entry:
    """A ``google.logging.v2.LogEntry`` (raw protobuf) → :class:`Entry`."""
    replica = pb.labels.get(TASK_LABEL) or pb.resource.labels.get("task_name") or pb.log_name.rsplit("/", 1)[-1]
    payload = pb.WhichOneof("payload")
    if payload == "text_payload":
        message = pb.text_payload
    elif payload == "json_payload":
        fields = pb.json_payload.fields
        message = fields["message"].string_value if "message" in fields else _struct_text(pb.json_payload)
    else:
        message = ""
    when = pb.timestamp.ToDatetime(tzinfo=dt.timezone.utc)
    receive = pb.receive_timestamp.ToDatetime(tzinfo=dt.timezone.utc) if pb.HasField("receive_timestamp") else when
    severity = _SEVERITY.get(pb.severity, str(pb.severity))
    return Entry(when, pb.insert_id, replica, severity, message.rstrip("\n"), receive)


def _struct_text(struct: Any) -> str:
    from google.protobuf import json_format

    text: str = json_format.MessageToJson(struct, indent=None)
    return text


class TailStream:
    """One open ``TailLogEntries`` call: iterate for :class:`TailBatch` es, ``cancel()`` to end it."""

    def __init__(self, client: Any, resource: str, filter: str, buffer_window: float):
        from google.cloud.logging_v2.types import TailLogEntriesRequest

        self._stop = threading.Event()
        first = TailLogEntriesRequest(
            resource_names=[resource], filter=filter, buffer_window=dt.timedelta(seconds=buffer_window)
        )

        def requests() -> Iterator[Any]:
            yield first
            self._stop.wait()  # keep the request side open: closing it may end the stream

        self._call = client.tail_log_entries(requests=requests(), retry=None, timeout=None)

    def __iter__(self) -> Iterator[TailBatch]:
        for response in self._call:
            pb = type(response).pb(response)
            yield TailBatch([to_entry(e) for e in pb.entries], sum(s.suppressed_count for s in pb.suppression_info))

    def cancel(self) -> None:
        self._stop.set()
        self._call.cancel()


class CloudLoggingReader:
    """``entries.list`` pages (call it) and ``TailLogEntries`` streams (``tail``) for one project."""

    def __init__(self, client: Any, project: str, *, timeout: float = 30.0):
        self.client, self.resource, self.timeout = client, f"projects/{project}", timeout

    @classmethod
    def connect(cls, project: str, endpoint: Any, creds: Any) -> CloudLoggingReader:
        from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
        from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport

        transport = grpc_transport(LoggingServiceV2GrpcTransport, endpoint, creds)
        return cls(LoggingServiceV2Client(transport=transport), project)

    def __call__(self, filter: str, page_token: str | None, page_size: int) -> tuple[list[Entry], str | None]:
        request = {
            "resource_names": [self.resource],
            "filter": filter,
            "order_by": "timestamp asc",  # the only order the API has: receiveTimestamp cannot be ordered on
            "page_size": page_size,
            "page_token": page_token or "",
        }
        pager = self.client.list_log_entries(request=request, retry=None, timeout=self.timeout)
        page = next(iter(pager.pages))  # the first page only: exactly one request
        response = type(page).pb(page)
        return [to_entry(e) for e in response.entries], response.next_page_token or None

    def tail(self, filter: str, buffer_window: float) -> TailStream:
        return TailStream(self.client, self.resource, filter, buffer_window)
