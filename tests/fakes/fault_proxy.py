"""A proxy on 127.0.0.1 in front of one server, with a fault schedule: a flaky network on demand.

Point the code under test at :attr:`FaultProxy.url` (HTTP: ``AWS_ENDPOINT_URL_CLOUDWATCH_LOGS``)
or :attr:`FaultProxy.address` (gRPC: ``CLOUDTRAIN_LOGGING_ENDPOINT``), the same endpoint
settings a user has, and schedule faults as windows ``[start, end)`` of a clock (real time by
default; a test's virtual clock when the code under test sleeps on one):

* :func:`answer` — HTTP only: requests are answered by the proxy with a status and body (a 503,
  or throttling in the cloud's own shape: :func:`aws_error`), never reaching the server;
* :func:`refuse` — the listener is closed (connections are refused) and every open connection
  is reset: an endpoint that is down, then back on the same port;
* :func:`reset` — HTTP: the response is cut off half-way and the connection reset; TCP (gRPC):
  open connections are reset;
* :func:`delay` — every request (HTTP) or every chunk from the server (TCP) waits ``seconds``
  of real time first.

:meth:`FaultProxy.after_first_request` counts the windows from the first call forwarded instead,
so that faults meet a client that started late on a loaded machine; ``counts`` and ``events``
say what the proxy did, and when.

``http=True`` reads HTTP/1.1 requests and responses (keep-alive, ``Content-Length`` and
chunked bodies, streamed through as they come); ``http=False`` forwards bytes (HTTP/2, gRPC),
where a refused or reset connection is what the client sees as ``UNAVAILABLE``. Status-code
faults for gRPC live in the fakes themselves (tests/fakes/cloud_logging.py ``outages``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import select
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import BinaryIO


@dataclasses.dataclass(frozen=True)
class Fault:
    kind: str  # "answer" | "refuse" | "reset" | "delay"
    start: float
    end: float
    status: int = 503
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    seconds: float = 0.0
    only: bytes | None = None  # HTTP: applies only to requests whose head contains this (an operation name)

    def active(self, now: float, head: bytes | None = None) -> bool:
        if not self.start <= now < self.end:
            return False
        return self.only is None or head is None or self.only in head


def answer(
    start: float,
    end: float,
    status: int,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    only: str | None = None,
) -> Fault:
    return Fault(
        "answer",
        start,
        end,
        status=status,
        body=body,
        headers=tuple((headers or {}).items()),
        only=only.encode() if only else None,
    )


def refuse(start: float, end: float) -> Fault:
    return Fault("refuse", start, end)


def reset(start: float, end: float, only: str | None = None) -> Fault:
    return Fault("reset", start, end, only=only.encode() if only else None)


def delay(start: float, end: float, seconds: float) -> Fault:
    return Fault("delay", start, end, seconds=seconds)


def aws_error(status: int, code: str, message: str) -> dict:
    """An AWS JSON-protocol error (CloudWatch Logs, SageMaker) as the service sends it, for :func:`answer`:
    ``answer(t0, t1, **aws_error(400, "ThrottlingException", "Rate exceeded"))``."""
    return {
        "status": status,
        "body": json.dumps({"__type": code, "message": message}).encode(),
        "headers": {"Content-Type": "application/x-amz-json-1.1", "x-amzn-RequestId": "fault-proxy"},
    }


#: CloudWatch Logs' own answers when it sheds load.
THROTTLED = aws_error(400, "ThrottlingException", "Rate exceeded")
UNAVAILABLE = aws_error(503, "ServiceUnavailableException", "The service is unavailable. Please try again later.")
TOO_MANY = aws_error(429, "ThrottlingException", "Too Many Requests")

_REASONS = {
    400: "Bad Request",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class FaultProxy:
    """A proxy to ``target`` ("host:port") on a fixed 127.0.0.1 port; see the module's docstring."""

    def __init__(self, target: str, *, http: bool, clock: Callable[[], float] = time.monotonic, poll: float = 0.005):
        host, _, port = target.rpartition(":")
        self.target = (host or "127.0.0.1", int(port))
        self.http, self.clock, self.poll = http, clock, poll
        self.faults: list[Fault] = []
        self._relative: list[Fault] = []  # for after_first_request
        #: forwarded, answered, refused (a connection or request cut at once), closed (the listener),
        #: reset (a response cut off), delayed
        self.counts: Counter[str] = Counter()
        self.events: list[tuple[float, str]] = []  # (clock time, one of the counts' names), in order
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._closing = threading.Event()
        self._listener: socket.socket | None = self._listen(0)
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.address}"
        self._thread = threading.Thread(target=self._serve, name="fault-proxy", daemon=True)
        self._thread.start()

    # -- the schedule ---------------------------------------------------------------------

    def schedule(self, *faults: Fault) -> FaultProxy:
        with self._lock:
            self.faults.extend(faults)
        return self

    def refusing(self, now: float | None = None) -> bool:
        now = self.clock() if now is None else now
        return any(f.kind == "refuse" and f.active(now) for f in self.faults)

    def _fault(self, kind: str, now: float, head: bytes | None = None) -> Fault | None:
        return next((f for f in self.faults if f.kind == kind and f.active(now, head)), None)

    def after_first_request(self, *faults: Fault) -> FaultProxy:
        """Schedule ``faults`` with their windows counted from the first request (HTTP) or connection
        (TCP) forwarded: faults that meet a client that is following, however late it started."""
        with self._lock:
            self._relative.extend(faults)
        return self

    def _count(self, what: str) -> None:
        with self._lock:
            now = self.clock()
            self.counts[what] += 1
            self.events.append((now, what))
            if what == "forwarded" and self._relative:
                shifted = [dataclasses.replace(f, start=now + f.start, end=now + f.end) for f in self._relative]
                self.faults.extend(shifted)
                self._relative = []

    # -- life -----------------------------------------------------------------------------

    def close(self) -> None:
        self._closing.set()
        self._thread.join(timeout=5)
        self._reset_all()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _listen(self, port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        return listener

    def _serve(self) -> None:
        """The one thread that owns the listener: closed while refusing, reopened on the same port after."""
        while not self._closing.is_set():
            if self.refusing():
                if self._listener is not None:
                    self._listener.close()
                    self._listener = None
                    self._count("closed")
                    self._reset_all()
                self._closing.wait(self.poll)
                continue
            if self._listener is None:
                try:
                    self._listener = self._listen(self.port)
                except OSError:  # the port is briefly held; try again
                    self._closing.wait(self.poll)
                    continue
            ready, _, _ = select.select([self._listener], [], [], self.poll)
            if not ready:
                continue
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            if self.refusing():
                self._count("refused")
                _abort(client)
                continue
            self._track(client)
            handler = self._serve_http if self.http else self._serve_tcp
            threading.Thread(target=handler, args=(client,), name="fault-proxy-conn", daemon=True).start()
        if self._listener is not None:
            self._listener.close()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._conns.add(sock)

    def _forget(self, *socks: socket.socket) -> None:
        with self._lock:
            for sock in socks:
                self._conns.discard(sock)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.close()

    def _reset_all(self) -> None:
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for sock in conns:
            _abort(sock)

    # -- TCP: bytes both ways (HTTP/2, gRPC) ----------------------------------------------

    def _serve_tcp(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.target)
        except OSError:
            self._forget(client)
            return
        self._track(server)
        self._count("forwarded")
        threading.Thread(target=self._pump, args=(server, client), daemon=True).start()
        self._pump(client, server)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                now = self.clock()
                if self._fault("reset", now) or self.refusing(now):
                    self._count("reset")
                    _abort(source)
                    _abort(sink)
                    return
                slow = self._fault("delay", now)
                if slow:
                    self._count("delayed")
                    time.sleep(slow.seconds)
                sink.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
        self._forget(source)

    # -- HTTP/1.1: one request at a time ---------------------------------------------------

    def _serve_http(self, client: socket.socket) -> None:
        server: socket.socket | None = None
        reader = client.makefile("rb")
        try:
            while True:
                head = _read_head(reader)
                if head is None:
                    return
                if b"100-continue" in head.lower():  # answer it here; the server gets the whole request
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    head = b"\r\n".join(h for h in head.split(b"\r\n") if not h.lower().startswith(b"expect:"))
                body = b"".join(_body(reader, head))
                now = self.clock()
                if self.refusing(now):
                    self._count("refused")
                    return _abort(client)
                canned = self._fault("answer", now, head)
                if canned:
                    self._count("answered")
                    client.sendall(_response(canned))
                    continue
                slow = self._fault("delay", now, head)
                if slow:
                    self._count("delayed")
                    time.sleep(slow.seconds)
                if server is None:
                    server = socket.create_connection(self.target)
                    self._track(server)
                    upstream = server.makefile("rb")
                server.sendall(head + body)
                cut = self._fault("reset", now, head) is not None
                if not self._relay(upstream, client, head, cut):
                    return
        except OSError:
            return
        finally:
            self._forget(client, *([server] if server else []))

    def _relay(self, upstream: BinaryIO, client: socket.socket, request: bytes, cut: bool) -> bool:
        """The server's response to the client as it comes; cut half-way and reset when ``cut``.
        Returns whether the connection can carry another request."""
        head = _read_head(upstream)
        if head is None:
            _abort(client)
            return False
        if cut:
            body = b"".join(_body(upstream, head, request))
            self._count("reset")
            client.sendall(head + body[: len(body) // 2])
            _abort(client)
            return False
        self._count("forwarded")
        client.sendall(head)
        for piece in _body(upstream, head, request):
            client.sendall(piece)
        framed = _header(head, b"content-length") is not None or _header(head, b"transfer-encoding") is not None
        return framed and b"connection: close" not in head.lower()


def _abort(sock: socket.socket) -> None:
    """Close with a reset (RST), as a crashed or restarted endpoint does."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


def _read_head(reader: BinaryIO) -> bytes | None:
    """A request's or response's start line and headers, through the blank line; None at EOF."""
    lines = []
    while True:
        line = reader.readline(65537)
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            return b"".join(lines)


def _header(head: bytes, name: bytes) -> bytes | None:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def _body(reader: BinaryIO, head: bytes, request: bytes | None = None) -> Iterator[bytes]:
    """The body after ``head``, raw (chunked framing kept), piece by piece as it arrives."""
    if request is not None:  # a response: none after HEAD, 1xx, 204, 304
        status = int(head.split(b" ", 2)[1])
        if request.startswith(b"HEAD ") or status < 200 or status in (204, 304):
            return
    if (_header(head, b"transfer-encoding") or b"").lower() == b"chunked":
        while True:
            size_line = reader.readline()
            if not size_line:
                return
            yield size_line
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                while True:  # trailers, through the blank line
                    line = reader.readline()
                    yield line
                    if line in (b"\r\n", b"\n", b""):
                        return
            yield reader.read(size + 2)
    length = _header(head, b"content-length")
    if length is not None:
        left = int(length)
        while left > 0:
            piece = reader.read1(min(left, 65536)) if hasattr(reader, "read1") else reader.read(min(left, 65536))
            if not piece:
                return
            left -= len(piece)
            yield piece
    elif request is not None:  # a response without a length ends when the server closes
        while piece := (reader.read1(65536) if hasattr(reader, "read1") else reader.read(65536)):
            yield piece


def _response(fault: Fault) -> bytes:
    headers = {"Content-Length": str(len(fault.body)), **dict(fault.headers)}
    lines = [f"HTTP/1.1 {fault.status} {_REASONS.get(fault.status, 'Error')}"] + [
        f"{k}: {v}" for k, v in headers.items()
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + fault.body
