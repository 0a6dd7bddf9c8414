"""A TCP proxy on 127.0.0.1 that stops forwarding a connection's upload after some bytes.

Put it in front of a server (through an endpoint setting such as ``AWS_ENDPOINT_URL_S3``)
to freeze a client half-way through an upload, then kill the client: what is left on the
server is what a user's killed upload would leave. Each connection has its own count, so
calls on fresh connections (an abort, a listing) still go through.
"""

from __future__ import annotations

import socket
import threading


class StallingProxy:
    def __init__(self, target_port: int, stall_after: int, target_host: str = "127.0.0.1"):
        self.target = (target_host, target_port)
        self.stall_after = stall_after
        self.stalled = threading.Event()  # set once a connection has stopped being forwarded
        self._closing = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._sockets: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closing.set()
        for s in self._sockets:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self) -> StallingProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upload: bool) -> None:
        sent = 0
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if upload and sent + len(data) > self.stall_after:
                    sink.sendall(data[: max(self.stall_after - sent, 0)])
                    self.stalled.set()
                    self._closing.wait()  # hold the rest: the client blocks mid-upload
                    return
                sink.sendall(data)
                sent += len(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
