"""In-repo fakes of cloud services: real gRPC servers on 127.0.0.1, and a virtual clock.

The clock is shared by a fake and the code under test: ``sleep`` advances it at once, so a
ten-minute job streams in milliseconds while the fake still decides, by that same clock,
which log entries are readable and what state a job is in.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol


class Clock(Protocol):
    """What a fake reads the time from: a :class:`VirtualClock`, an :class:`AcceleratedClock` or the real one."""

    def time(self) -> float: ...


class VirtualClock:
    def __init__(self, start: float = 1_700_000_000.0):
        self.now = start
        self.slept: list[float] = []
        self._lock = threading.Lock()

    def time(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)
            self.now += max(seconds, 0.0)


class AcceleratedClock:
    """Real time, sped up: ``speed`` virtual seconds pass per real second.

    For code with threads of its own (a streaming read on a background thread), where a
    virtual clock that only moves on ``sleep`` cannot work: the fake and the code under
    test share this clock, so a 15-minute job streams in seconds of real time.
    """

    def __init__(self, start: float = 1_700_000_000.0, speed: float = 100.0):
        import time

        self.start, self.speed = start, speed
        self._real = time.monotonic
        self._real_sleep = time.sleep
        self._origin = time.monotonic()

    def time(self) -> float:
        return self.start + (self._real() - self._origin) * self.speed

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._real_sleep(seconds / self.speed)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(max(seconds, 0.0) / self.speed)


def serve(service: str, methods: dict[str, Any]) -> tuple[Any, str]:
    """Start a plain-text gRPC server for ``service`` on a free 127.0.0.1 port; returns (server, "host:port")."""
    from concurrent import futures

    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, methods),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


def stream_stream(fn, request_cls, response_serializer) -> Any:
    import grpc

    return grpc.stream_stream_rpc_method_handler(
        fn, request_deserializer=request_cls.deserialize, response_serializer=response_serializer
    )


def unary(fn, request_cls, response_serializer) -> Any:
    import grpc

    return grpc.unary_unary_rpc_method_handler(
        fn, request_deserializer=request_cls.deserialize, response_serializer=response_serializer
    )
