"""The collector's HTTP server: /metrics over plain HTTP, or TLS and basic auth from a web config
(``collectors.serving.webconfig``, exporter-toolkit's format), serving the pages of a
``collectors.export.exposition.RenderedExposition`` (rendered once per refresh, the same bytes to every scrape).

Why not ``prometheus_client.start_http_server``: it takes a certificate but has no basic auth, it
renders per scrape, and it wraps the listening socket, so the TLS handshake runs in the accepting
thread: one client that opens a connection and sends nothing stalls every scrape. Here each
connection's handshake runs in its own thread (``do_handshake_on_connect=False``, done on the first
read) with a deadline.

Under load (issue 14: 200 concurrent scrapes): a thread per connection (daemon threads, so a stuck
client never holds up shutdown), a listen backlog of ``BACKLOG`` rather than socketserver's 5 (with 5,
connections beyond it waited for the client's SYN retransmits, 1 s, 3 s, 7 s: the p99 of 11 s), HTTP/1.1
keep-alive (Prometheus keeps its connection, so no TLS handshake per scrape; an idle connection is
closed after ``HANDSHAKE_SECONDS``), and no work per request beyond headers, auth and one write.
"""

from __future__ import annotations

import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from collectors.serving.webconfig import BasicAuth, WebConfig, WebConfigError

HANDSHAKE_SECONDS = 10  # a client that opens a connection and says nothing (or idles) is dropped after this
BACKLOG = 1024  # listen(2) backlog; Linux caps it at net.core.somaxconn (4096 since 5.4)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = BACKLOG


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every answer has a Content-Length
    server_version = "compaction-monitor"
    sys_version = ""
    timeout = HANDSHAKE_SECONDS  # StreamRequestHandler: the socket's timeout, the TLS handshake's too
    exposition = None  # set per server (``start``)
    auth: BasicAuth | None = None

    def log_message(self, *args):  # a scrape every 15 s would fill stderr: nothing logged per request
        pass

    def handle(self):
        try:
            super().handle()
        except (ssl.SSLError, OSError):
            pass  # a failed handshake or a client gone: that connection only

    def _send(self, status: int, body: bytes, headers: dict) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if self.headers.get("Content-Length", "0") != "0" or "Transfer-Encoding" in self.headers:
            # a request body is never read here: the connection cannot carry another request
            self.send_header("Connection", "close")
            self.close_connection = True
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _authorized(self) -> bool:
        if self.auth is None or self.auth.check(self.headers.get("Authorization")):
            return True
        self._send(401, b"Unauthorized\n", {"WWW-Authenticate": 'Basic realm="compaction-monitor"',
                                              "Content-Type": "text/plain; charset=utf-8"})
        return False

    def do_GET(self):
        if not self._authorized():
            return
        url = urlsplit(self.path)
        if url.path == "/favicon.ico":  # as prometheus_client: browsers ask for it
            self._send(200, b"", {})
            return
        # every other path is the exposition, as prometheus_client serves it
        names = parse_qs(url.query).get("name[]")
        try:
            page = self.exposition.page(self.headers.get("Accept"), self.headers.get("Accept-Encoding"), names)
        except Exception as exc:  # noqa: BLE001 - a format that cannot be encoded: this answer only
            self._send(500, f"# HTTP 500: cannot encode the page: {type(exc).__name__}\n".encode(),
                       {"Content-Type": "text/plain; charset=utf-8"})
            return
        headers = {"Content-Type": page.content_type, "Vary": "Accept, Accept-Encoding"}
        if page.gzip:
            headers["Content-Encoding"] = "gzip"
        self._send(200, page.body, headers)

    def do_OPTIONS(self):
        if self._authorized():
            self._send(200, b"", {"Allow": "OPTIONS,GET"})

    def _not_allowed(self):
        if self._authorized():
            self._send(405, f"# HTTP 405 Method Not Allowed: {self.command}; use OPTIONS or GET\n".encode(),
                       {"Allow": "OPTIONS,GET"})

    do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = _not_allowed


def ssl_context(web: WebConfig) -> ssl.SSLContext:
    """The server's TLS context from ``tls_server_config``; WebConfigError naming the key whose file
    cannot be used."""
    t = web.tls
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3 if t.min_version == "TLS13" else ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(t.cert_file, t.key_file)
    except FileNotFoundError as exc:
        missing = "cert_file" if not _exists(t.cert_file) else "key_file"
        raise WebConfigError(web.file, f"tls_server_config.{missing}",
                             f"cannot read {getattr(t, missing)}: {exc.strerror}") from None
    except (ssl.SSLError, OSError) as exc:
        raise WebConfigError(web.file, "tls_server_config.cert_file/key_file",
                             f"cannot load {t.cert_file} with {t.key_file}: {getattr(exc, 'reason', None) or exc}"
                             ) from None
    if t.client_auth_type != "NoClientCert":
        try:
            ctx.load_verify_locations(cafile=t.client_ca_file)
        except (ssl.SSLError, OSError) as exc:
            raise WebConfigError(web.file, "tls_server_config.client_ca_file",
                                 f"cannot load {t.client_ca_file}: {getattr(exc, 'strerror', None) or exc}") from None
        ctx.verify_mode = ssl.CERT_REQUIRED if t.client_auth_type == "RequireAndVerifyClientCert" else ssl.CERT_OPTIONAL
    return ctx


def _exists(path: str) -> bool:
    import os

    return os.path.exists(path)


def prepare(web: WebConfig | None) -> tuple[ssl.SSLContext | None, BasicAuth | None]:
    """Everything the web config needs, loaded before the port opens (errors: WebConfigError)."""
    if web is None:
        return None, None
    ctx = ssl_context(web) if web.tls else None
    auth = BasicAuth(web.basic_auth_users) if web.basic_auth_users else None
    return ctx, auth


def start(exposition, address: str, port: int, ctx: ssl.SSLContext | None = None, auth: BasicAuth | None = None):
    """Serve ``exposition`` (anything with the ``page`` of ``collectors.export.exposition.RenderedExposition``:
    this room serves pages, it does not render them) at /metrics (and every other path) on ``address:port``
    in a thread; the server (its ``server_address`` has the port, ``shutdown()`` stops it)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    class Handler(_Handler):
        pass

    Handler.exposition, Handler.auth = exposition, auth

    class Server(_Server):
        address_family = family

        def get_request(self):
            sock, addr = super().get_request()
            if ctx is not None:
                sock = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            return sock, addr

    httpd = Server((address, port), Handler)
    threading.Thread(target=httpd.serve_forever, name="metrics-http", daemon=True).start()
    return httpd
