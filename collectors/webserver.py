"""The collector's HTTP server: /metrics over plain HTTP, or TLS and basic auth from a web config
(``collectors.webconfig``, exporter-toolkit's format).

Why not ``prometheus_client.start_http_server``: it takes a certificate but has no basic auth, and it
wraps the listening socket, so the TLS handshake runs in the accepting thread: one client that opens a
connection and sends nothing stalls every scrape. Here each connection's handshake runs in its own
thread (``do_handshake_on_connect=False``, done on the first read) with a deadline.
"""

from __future__ import annotations

import socket
import ssl
import threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app

from collectors.webconfig import BasicAuth, WebConfig, WebConfigError

HANDSHAKE_SECONDS = 10  # a client that opens a connection and says nothing is dropped after this


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _Handler(WSGIRequestHandler):
    timeout = HANDSHAKE_SECONDS  # StreamRequestHandler: the socket's timeout, the TLS handshake's too

    def log_message(self, *args):  # a scrape every 15 s would fill stderr: nothing logged per request
        pass

    def handle(self):
        try:
            super().handle()
        except (ssl.SSLError, OSError):
            pass  # a failed handshake or a client gone: that connection only


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


def _with_basic_auth(app, auth: BasicAuth):
    def wrapped(environ, start_response):
        if not auth.check(environ.get("HTTP_AUTHORIZATION")):
            start_response("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="compaction-monitor"'),
                                                ("Content-Type", "text/plain; charset=utf-8")])
            return [b"Unauthorized\n"]
        return app(environ, start_response)

    return wrapped


def prepare(web: WebConfig | None) -> tuple[ssl.SSLContext | None, BasicAuth | None]:
    """Everything the web config needs, loaded before the port opens (errors: WebConfigError)."""
    if web is None:
        return None, None
    ctx = ssl_context(web) if web.tls else None
    auth = BasicAuth(web.basic_auth_users) if web.basic_auth_users else None
    return ctx, auth


def start(registry, address: str, port: int, ctx: ssl.SSLContext | None = None, auth: BasicAuth | None = None):
    """Serve ``registry`` at /metrics (and /) on ``address:port`` in a thread; the server (its
    ``server_address`` has the port, ``shutdown()`` stops it)."""
    app = make_wsgi_app(registry)
    if auth is not None:
        app = _with_basic_auth(app, auth)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    class Server(_Server):
        address_family = family

        def get_request(self):
            sock, addr = super().get_request()
            if ctx is not None:
                sock = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            return sock, addr

    httpd = make_server(address, port, app, Server, handler_class=_Handler)
    threading.Thread(target=httpd.serve_forever, name="metrics-http", daemon=True).start()
    return httpd
