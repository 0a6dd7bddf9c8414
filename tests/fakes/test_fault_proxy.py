"""The fault proxy itself, in front of a small HTTP/1.1 server: each fault is what a client sees."""

from __future__ import annotations

import http.client
import http.server
import json
import socket
import threading

import pytest

from tests.fakes.fault_proxy import THROTTLED, FaultProxy, answer, delay, refuse, reset

pytestmark = pytest.mark.server


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as botocore's connection pool uses it

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (b"one,", b"two,", b"three"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        reply = json.dumps({"echo": body.decode(), "pad": "x" * 4000}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def world():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    clock = _Clock()
    proxy = FaultProxy(f"127.0.0.1:{server.server_address[1]}", http=True, clock=clock)
    yield proxy, clock
    proxy.close()
    server.shutdown()


def _post(conn: http.client.HTTPConnection, body: str, path: str = "/", target: str = "Logs.GetLogEvents"):
    conn.request("POST", path, body=body, headers={"X-Amz-Target": target})
    response = conn.getresponse()
    return response.status, response.read()


def test_requests_pass_through_on_one_kept_alive_connection(world):
    proxy, _ = world
    conn = http.client.HTTPConnection(proxy.address)
    assert [json.loads(_post(conn, f"r{i}")[1])["echo"] for i in range(3)] == ["r0", "r1", "r2"]
    assert _post(conn, "", path="/chunked") == (200, b"one,two,three")
    assert proxy.counts["forwarded"] == 4


def test_an_answer_window_gives_the_clouds_error_to_the_matching_operation_only(world):
    proxy, clock = world
    proxy.schedule(answer(10, 20, **THROTTLED, only="GetLogEvents"))
    conn = http.client.HTTPConnection(proxy.address)
    clock.now = 10
    status, body = _post(conn, "a")
    assert (status, json.loads(body)["__type"]) == (400, "ThrottlingException")
    assert _post(conn, "b", target="Logs.DescribeLogStreams")[0] == 200  # same connection, other operation
    clock.now = 20
    assert _post(conn, "c")[0] == 200  # the window is over
    assert proxy.counts["answered"] == 1


def test_a_refuse_window_closes_the_listener_resets_open_connections_and_reopens_the_same_port(world):
    proxy, clock = world
    conn = http.client.HTTPConnection(proxy.address)
    assert _post(conn, "before")[0] == 200
    proxy.schedule(refuse(5, 15))
    clock.now = 5
    with pytest.raises(OSError):  # the kept-alive connection is reset, or the request on it cut
        _post(conn, "during")
    _wait_for(lambda: _refused(proxy.port))
    clock.now = 15
    _wait_for(lambda: not _refused(proxy.port))
    assert _post(http.client.HTTPConnection(proxy.address), "after")[0] == 200
    assert proxy.counts["closed"] == 1


def test_a_reset_window_cuts_the_response_half_way(world):
    proxy, clock = world
    proxy.schedule(reset(0, 1))
    conn = http.client.HTTPConnection(proxy.address)
    with pytest.raises((http.client.IncompleteRead, ConnectionError)):
        _post(conn, "cut")
    clock.now = 1
    assert _post(http.client.HTTPConnection(proxy.address), "whole")[0] == 200
    assert proxy.counts["reset"] == 1


def test_a_delay_window_holds_requests_and_tcp_mode_forwards_bytes(world):
    proxy, _ = world
    proxy.schedule(delay(0, 1, 0.01))
    assert _post(http.client.HTTPConnection(proxy.address), "slow")[0] == 200
    assert proxy.counts["delayed"] == 1
    with FaultProxy(proxy.address, http=False) as tcp:  # a TCP proxy in front of the HTTP proxy
        assert _post(http.client.HTTPConnection(tcp.address), "bytes")[0] == 200


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    except ConnectionResetError:  # queued when the listener closed
        return False
    return False


def _wait_for(condition, tries: int = 2000) -> None:
    event = threading.Event()
    for _ in range(tries):
        if condition():
            return
        event.wait(0.005)
    raise AssertionError("the proxy never got there")
