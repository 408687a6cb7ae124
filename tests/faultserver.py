"""An HTTP endpoint that serves a good page or, on demand, a fault a real broker, collector or
Prometheus cannot be made to show: an HTML login page, a 401 (wrong credentials), a 500, garbage, a hang, a huge page, an
endless page, a page that drips a byte at a time (in the body or in the headers), a connection
closed without an answer, a gzip bomb sent despite ``Accept-Encoding: identity``, a
``Content-Length`` of a terabyte.

Used by the collector's, the dashboard's and boundedhttp's fault tests (one server, many modes)."""

from __future__ import annotations

import gzip
import http.server
import threading

GOOD = (b"kafka_log_logcleanermanager_max_dirty_percent 12.0\n"
        b"kafka_log_logcleaner_deadthreadcount 0.0\n")
MODES = ("ok", "html", "401", "500", "garbage", "hang", "huge", "endless", "drip", "drip_headers", "close", "bomb",
         "claims_huge", "403")
BOMB_EXPANDED = 256 * 1024 * 1024  # what the gzip bomb inflates to (it is about 250 KiB on the wire)


def _bomb() -> bytes:
    z = gzip.compress(b"\0" * (1 << 20), 9)  # gzip members concatenate: 256 of them inflate to 256 MiB
    return z * (BOMB_EXPANDED >> 20)


class FaultServer:
    """Serves ``ok_body`` (the cleaner gauges unless given), or in ``mode`` a fault. In "hang" a request
    is held until the test releases it (``release``, or any other mode), so a test can see the
    collector answer while a fetch is still stuck; "drip" and "endless" go on until the client hangs
    up or the mode changes. ``served`` counts requests per mode."""

    def __init__(self, ok_body: bytes = GOOD, drip_every: float = 0.05):
        self.mode = "ok"
        self.ok_body = ok_body
        self.release = threading.Event()
        self.held = 0  # requests the server is holding right now
        self.served: dict[str, int] = {}
        self.last_headers: dict = {}  # the last request's headers
        self._stop = threading.Event()
        self._bomb = None
        lock = threading.Lock()
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _drip(self, data: bytes | None, mode: str) -> None:
                """One byte of ``data`` (or b"x" forever) every ``drip_every`` s while the mode holds."""
                i = 0
                while outer.mode == mode and not outer._stop.is_set():
                    self.wfile.write(data[i:i + 1] if data is not None else b"x")
                    self.wfile.flush()
                    i += 1
                    if data is not None and i >= len(data):
                        return
                    outer._stop.wait(drip_every)

            def do_GET(self):
                m = outer.mode
                with lock:
                    outer.served[m] = outer.served.get(m, 0) + 1
                    outer.last_headers = dict(self.headers)
                try:
                    self._serve(m)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _serve(self, m):
                if m == "hang":
                    with lock:
                        outer.held += 1
                    outer.release.wait(120)
                    with lock:
                        outer.held -= 1
                    return
                if m == "close":
                    self.close_connection = True
                    return  # nothing written: the client sees the connection closed without an answer
                if m == "drip_headers":
                    self.wfile.write(b"HTTP/1.0 200 OK\r\n")
                    self._drip(b"X-Slow: " + b"y" * 100_000 + b"\r\n\r\n", m)
                    return
                if m in ("500", "403"):  # 403: a proxy's refusal (the JMX exporter itself answers 401)
                    self.send_response(int(m))
                    self.end_headers()
                    return
                if m == "401":  # wrong credentials, as a JMX exporter or Jolokia behind basic auth answers
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="jmx"')
                    self.end_headers()
                    self.wfile.write(b"Unauthorized\n")
                    return
                self.send_response(200)
                if m == "bomb":
                    self.send_header("Content-Encoding", "gzip")
                if m == "claims_huge":
                    self.send_header("Content-Length", str(10 ** 12))
                self.end_headers()
                if m == "html":
                    self.wfile.write(b"<html><body>Please log in</body></html>")
                elif m == "garbage":
                    self.wfile.write(b"\x00\xff garbage {{{ not prometheus\n")
                elif m == "huge":
                    for _ in range(400):
                        self.wfile.write(b"x" * 65536)
                elif m == "endless":
                    block = b"kafka_log_logcleaner_deadthreadcount 0.0\n" * 1600
                    while outer.mode == m and not outer._stop.is_set():
                        self.wfile.write(block)
                elif m == "drip":
                    self._drip(None, m)
                elif m == "bomb":
                    if outer._bomb is None:
                        outer._bomb = _bomb()
                    self.wfile.write(outer._bomb)
                elif m == "claims_huge":
                    self.wfile.write(b"x" * 100)
                else:
                    self.wfile.write(outer.ok_body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/metrics"
        # polled every 0.05 s, not socketserver's 0.5: close() (shutdown) waits for the poll, in every test
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def set_mode(self, mode: str):
        assert mode in MODES, mode
        if mode == "hang":
            self.release.clear()
        self.mode = mode
        if mode != "hang":
            self.release.set()  # let held requests go

    def close(self):
        self._stop.set()
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
