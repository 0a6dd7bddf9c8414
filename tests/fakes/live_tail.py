"""CloudWatch Logs ``StartLiveTail`` as the service streams it, in front of moto.

moto answers ``StartLiveTail`` with one snapshot of every stored event and closes the
response. The real service keeps the response open: an ``initial-response`` event, one
``sessionStart``, then a ``sessionUpdate`` every second holding only the events ingested
since the previous one (at most 500: more are sampled down and the update says
``sampled``), until the session ends with a ``SessionTimeoutException`` after three hours.
A reader too slow to take the updates loses the oldest ones past ten.

:class:`LiveTailFake` is an HTTP server on 127.0.0.1 that speaks that: each event is a real
``application/vnd.amazon.eventstream`` frame (prelude, headers, JSON payload, CRC32s) in a
chunked HTTP/1.1 response, which boto3 parses with its own parser. It reads the events from
moto's stored log streams (the in-process ``ThreadedMotoServer`` backend), so tests write logs
to moto as before; every other CloudWatch Logs call is passed through to moto unchanged.
Point ``AWS_ENDPOINT_URL_CLOUDWATCH_LOGS`` at :attr:`LiveTailFake.endpoint`.

Fault knobs (attributes, read at each update): ``max_events`` (sample above it),
``pauses`` (update index → seconds the reader is "slow": updates are buffered, ten at most,
the oldest dropped), ``end_after`` (updates per session, then ``SessionTimeoutException``),
``cut_after`` (updates per session, then the connection drops without a word),
``lose`` (update indices whose events vanish with no sign at all: the update comes, empty),
``refuse`` ((status, error code) to answer every ``StartLiveTail`` with).
"""

from __future__ import annotations

import http.client
import json
import random
import struct
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

from tests.fakes.aws import ACCOUNT

EVENTSTREAM = "application/vnd.amazon.eventstream"
BUFFERED_UPDATES = 10  # what the service keeps for a slow reader before dropping the oldest


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude (total and headers length, CRC), string headers,
    payload, message CRC — the format botocore's ``EventStreamBuffer`` decodes."""
    encoded = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        encoded += bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def event(kind: str, body: dict[str, Any]) -> bytes:
    return frame(
        {":message-type": "event", ":event-type": kind, ":content-type": "application/json"}, json.dumps(body).encode()
    )


def exception(kind: str, message: str) -> bytes:
    return frame(
        {":message-type": "exception", ":exception-type": kind, ":content-type": "application/json"},
        json.dumps({"message": message}).encode(),
    )


class LiveTailFake:
    """Streams ``StartLiveTail`` from moto's stored events; proxies every other call to moto."""

    def __init__(
        self, moto_endpoint: str, *, period: float = 1.0, sleep: Callable[[float], None] = time.sleep, seed: int = 1
    ):
        moto = urlparse(moto_endpoint)
        assert moto.hostname, f"not an http://host:port endpoint: {moto_endpoint}"
        self.moto_host, self.moto_port = moto.hostname, moto.port
        self.period, self.sleep = period, sleep
        self.rng = random.Random(seed)
        self.max_events = 500
        self.pauses: dict[int, float] = {}
        self.end_after: int | None = None
        self.cut_after: int | None = None
        self.refuse: tuple[int, str] | None = None
        self.lose: set[int] = set()
        self.lost: list[str] = []  # messages of the events ``lose`` took
        self.calls: Counter[str] = Counter()  # requests by operation, StartLiveTail included
        self.sessions = 0
        self.sampled_away = 0  # events left out of sampled updates
        self.dropped = 0  # events in updates dropped for a slow reader
        self.closing = threading.Event()
        self.quiet_errors = False  # True where a fault proxy's resets are the point, not news for stderr
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                fake._handle(self)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                if not fake.quiet_errors:
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="live-tail-fake")

    def __enter__(self) -> LiveTailFake:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()

    def count(self, operation: str) -> None:
        with self._lock:
            self.calls[operation] += 1

    # -- requests ------------------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        body = request.rfile.read(int(request.headers.get("Content-Length") or 0))
        operation = (request.headers.get("X-Amz-Target") or "").rpartition(".")[2]
        self.count(operation)
        if operation == "StartLiveTail":
            self._live_tail(request, json.loads(body or b"{}"))
        else:
            self._proxy(request, body)

    def _proxy(self, request: BaseHTTPRequestHandler, body: bytes) -> None:
        conn = http.client.HTTPConnection(self.moto_host, self.moto_port, timeout=30)
        try:
            headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "connection")}
            conn.request("POST", request.path, body=body, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
        finally:
            conn.close()
        request.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("content-length", "connection", "transfer-encoding", "server", "date"):
                request.send_header(key, value)
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def _error(self, request: BaseHTTPRequestHandler, status: int, code: str, message: str) -> None:
        data = json.dumps({"__type": code, "message": message}).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/x-amz-json-1.1")
        request.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def _live_tail(self, request: BaseHTTPRequestHandler, params: dict[str, Any]) -> None:
        if self.refuse:
            status, code = self.refuse
            return self._error(request, status, code, f"{code} (fault injected by the live-tail fake)")
        groups = params.get("logGroupIdentifiers") or []
        prefixes = params.get("logStreamNamePrefixes") or []
        if len(groups) != 1 or not str(groups[0]).startswith("arn:") or groups[0].endswith("*"):
            return self._error(
                request,
                400,
                "InvalidParameterException",
                "logGroupIdentifiers: one log group ARN, not ending in '*', with logStreamNamePrefixes",
            )
        arn = groups[0]
        region, group = arn.split(":")[3], arn.split(":log-group:", 1)[-1]
        streams = self._streams(region, group)
        if streams is None:
            return self._error(request, 400, "ResourceNotFoundException", f"log group {group} does not exist")
        with self._lock:
            self.sessions += 1
        sent = {name: len(events) for name, events in streams().items()}  # new events only
        request.send_response(200)
        request.send_header("Content-Type", EVENTSTREAM)
        request.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        request.send_header("Transfer-Encoding", "chunked")
        request.end_headers()
        out = request.wfile

        def send(data: bytes) -> None:
            out.write(b"%x\r\n%s\r\n" % (len(data), data))
            out.flush()

        try:
            send(event("initial-response", {}))
            send(
                event(
                    "sessionStart",
                    {
                        "requestId": str(uuid.uuid4()),
                        "sessionId": str(uuid.uuid4()),
                        "logGroupIdentifiers": groups,
                        "logStreamNames": [],
                        "logStreamNamePrefixes": prefixes,
                        "logEventFilterPattern": "",
                    },
                )
            )
            buffered: list[bytes] = []
            paused_until: float | None = None
            index = 0
            while not self.closing.is_set():
                self.sleep(self.period)
                index += 1
                if self.cut_after is not None and index > self.cut_after:
                    request.close_connection = True
                    request.connection.shutdown(2)  # no closing chunk: the reader sees a broken stream
                    return
                if self.end_after is not None and index > self.end_after:
                    send(exception("SessionTimeoutException", "Session timed out after 3 hours"))
                    break
                update = self._update(streams(), sent, prefixes, arn, lose=index in self.lose)
                if index in self.pauses:
                    paused_until = index + self.pauses[index] / self.period
                buffered.append(update)
                if paused_until is not None and index < paused_until:
                    while len(buffered) > BUFFERED_UPDATES:
                        with self._lock:
                            self.dropped += len(json.loads(_payload(buffered.pop(0)))["sessionResults"])
                    continue
                paused_until = None
                for data in buffered:
                    send(data)
                buffered.clear()
            out.write(b"0\r\n\r\n")
            out.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            return  # the reader went away

    def _update(
        self, streams: dict[str, list[Any]], sent: dict[str, int], prefixes: list[str], arn: str, lose: bool = False
    ) -> bytes:
        results = []
        for name, events in list(streams.items()):
            if prefixes and not any(name.startswith(p) for p in prefixes):
                continue
            start, end = sent.get(name, 0), len(events)
            sent[name] = end
            for e in events[start:end]:
                results.append(
                    {
                        "logStreamName": name,
                        "logGroupIdentifier": arn,
                        "message": e.message,
                        "timestamp": e.timestamp,
                        "ingestionTime": e.ingestion_time,
                    }
                )
        if lose:
            with self._lock:
                self.lost += [r["message"] for r in results]
            results = []
        sampled = len(results) > self.max_events
        if sampled:
            keep = sorted(self.rng.sample(range(len(results)), self.max_events))
            with self._lock:
                self.sampled_away += len(results) - len(keep)
            results = [results[i] for i in keep]
        return event("sessionUpdate", {"sessionMetadata": {"sampled": sampled}, "sessionResults": results})

    def _streams(self, region: str, group: str) -> Callable[[], dict[str, list[Any]]] | None:
        from moto.backends import get_backend

        backend = get_backend("logs")[ACCOUNT][region]
        if group not in backend.groups:
            return None
        log_group = backend.groups[group]
        return lambda: {name: stream.events for name, stream in list(log_group.streams.items())}


def _payload(message: bytes) -> bytes:
    total, headers = struct.unpack(">II", message[:8])
    return message[12 + headers : total - 4]
