"""The project's one HTTP GET, bounded in bytes and in total time: every page the collector
(JMX exporter, Jolokia), the dashboard (Prometheus' API, a collector's /metrics) and the demo read
goes through ``get``/``get_text``.

Why a package of its own: the collector and the dashboard both need it, and edges may not import
each other (tests/test_layout.py). It cannot live in the core either, because it opens sockets and
the core imports no network module. So it is a leaf library of ours, like a third-party one: it
imports only the standard library and nothing of this project, and any package may import it
(the layout test classifies it as SHARED and checks exactly that).

Why not ``requests``: its timeout is per socket read, so a page that drips a byte every half second
never times out, and its reads block until a whole chunk arrives. Here every ``recv`` on the
socket (status line, headers, chunk sizes and body alike) is given only what is left of one
deadline for the whole fetch, connect included, so a fetch ends by ``deadline`` seconds whatever
the server does. The body is counted as it arrives and the fetch stops at ``max_bytes``. Only
``identity`` encoding is asked for, so what is counted is what is kept (no decompression bomb).

Errors are ``FetchError`` with a ``kind`` (the collector's ``source_errors_total{error}`` label):
``connect`` (refused, unresolved), ``timeout`` (no byte of an answer within the deadline: a hung
endpoint), ``deadline`` (an answer kept coming but did not finish within it: a drip or an endless
page that stays under the byte cap), ``too_large`` (more than ``max_bytes``), ``tls`` (the certificate not trusted, the CA file
unusable), ``unauthorized`` (401
or 403: the credentials were refused or missing), ``http`` (any other status but 200), ``read`` (the
connection broke). Messages name the endpoint with any ``user:password@`` removed and never carry a
password given as ``auth``.

Credentials: ``auth=(user, password)`` sends HTTP Basic auth (it wins over a ``user:password@`` in the
URL), only to the scheme, host and port first asked (a redirect elsewhere goes without it).
``ca_file``: the CA bundle an ``https`` endpoint's certificate is checked against (a JMX exporter
served over TLS with the operator's own CA).
"""

from __future__ import annotations

import base64
import http.client
import io
import socket
import ssl
import time
import urllib.parse
from dataclasses import dataclass

CHUNK = 65536
MAX_REDIRECTS = 5


class FetchError(RuntimeError):
    """A source could not be read; ``kind`` is what the errors_total counter is labelled with."""

    def __init__(self, endpoint: str, kind: str, reason: str):
        endpoint = redact(endpoint)  # whoever raises it (a parser handed the configured URL), never a password
        self.endpoint, self.kind, self.reason = endpoint, kind, reason
        super().__init__(f"{endpoint}: {reason}")


def redact(url: str) -> str:
    """``url`` without the password of a ``user:password@`` part (safe to print)."""
    p = urllib.parse.urlsplit(url)
    if p.username is None and p.password is None:
        return url
    host = p.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{p.username}:***@{host}" if p.password is not None else f"{p.username}@{host}"
    if p.port:
        netloc += f":{p.port}"
    return urllib.parse.urlunsplit((p.scheme, netloc, p.path, p.query, p.fragment))


class _Expired(Exception):
    """The deadline passed inside a socket read."""


class _DeadlineSocketReader(io.RawIOBase):
    """The socket's reads, each allowed only what is left until the deadline (``socket.makefile``
    would let a blocking read loop over many ``recv`` calls, each with a fresh timeout)."""

    def __init__(self, sock, deadline: float, progress: list, sockfile):
        super().__init__()
        self.sock, self.deadline, self.progress = sock, deadline, progress
        self._sockfile = sockfile  # http.client's own file on the socket: holds the socket open until closed

    def close(self) -> None:
        if not self.closed:
            self._sockfile.close()
        super().close()

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Expired
        self.sock.settimeout(left)
        try:
            n = self.sock.recv_into(b)
        except (socket.timeout, TimeoutError):
            raise _Expired from None
        self.progress[0] += n
        return n


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict  # lower-cased names
    body: bytes
    url: str

    def text(self) -> str:
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            k, _, v = part.strip().partition("=")
            if k.lower() == "charset" and v:
                charset = v.strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


def _connection(parts, left: float, deadline: float, progress: list,
                ca_file: str | None = None) -> http.client.HTTPConnection:
    host, port = parts.hostname, parts.port
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(host, port, timeout=left, context=ssl.create_default_context(cafile=ca_file))
    else:
        conn = http.client.HTTPConnection(host, port, timeout=left)

    class _Response(http.client.HTTPResponse):
        def __init__(self, sock, *a, **kw):
            super().__init__(sock, *a, **kw)
            self.fp = io.BufferedReader(_DeadlineSocketReader(sock, deadline, progress, self.fp), CHUNK)

    conn.response_class = _Response
    return conn


def _origin(url: str) -> tuple:
    p = urllib.parse.urlsplit(url)
    return p.scheme, p.hostname, p.port


def get(url: str, *, deadline: float, max_bytes: int, params: dict | None = None,
        accept: str = "*/*", auth: tuple[str, str] | None = None, ca_file: str | None = None) -> Response:
    """GET ``url`` (with ``params`` as its query); the whole fetch, redirects included, ends within
    ``deadline`` seconds and keeps at most ``max_bytes`` of body. Any status is returned."""
    if params:
        url = url + ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
    shown = redact(url)
    end = time.monotonic() + deadline
    origin = _origin(url)
    for _ in range(MAX_REDIRECTS + 1):
        resp = _get_once(url, shown, end, deadline, max_bytes, accept,
                         auth if _origin(url) == origin else None, ca_file)
        location = resp.headers.get("location")
        if resp.status in (301, 302, 303, 307, 308) and location:
            url = urllib.parse.urljoin(url, location)
            shown = redact(url)
            continue
        return resp
    raise FetchError(shown, "http", f"more than {MAX_REDIRECTS} redirects")


def _get_once(url: str, shown: str, end: float, deadline: float, max_bytes: int, accept: str,
              auth: tuple[str, str] | None = None, ca_file: str | None = None) -> Response:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(shown, "connect", "not an http(s) URL")
    left = end - time.monotonic()
    if left <= 0:
        raise FetchError(shown, "deadline", f"the fetch did not finish within {deadline:g}s")
    progress = [0]  # bytes received from the server so far
    headers = {"Accept": accept, "Accept-Encoding": "identity", "User-Agent": "kafka-compaction-monitor",
               "Connection": "close"}
    if parts.username is not None:
        cred = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(cred.encode()).decode()
    if auth is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn = _connection(parts, left, end, progress, ca_file)
    except ValueError as exc:  # a bad port
        raise FetchError(shown, "connect", f"bad URL: {exc}") from None
    except (OSError, ssl.SSLError) as exc:  # ca_file missing, unreadable or not PEM
        raise FetchError(shown, "tls", f"cannot use the CA file {ca_file}: {exc.strerror or exc}"[:300]) from None
    resp = None
    try:
        try:
            conn.request("GET", path, headers=headers)
        except (socket.timeout, TimeoutError):
            raise FetchError(shown, "timeout", f"no connection within {deadline:g}s") from None
        except ssl.SSLError as exc:  # a certificate the CAs (ca_file's, else the system's) do not sign
            raise FetchError(shown, "tls", f"TLS: {getattr(exc, 'verify_message', None) or exc.reason or exc}"[:300]) from None
        except OSError as exc:
            raise FetchError(shown, "connect", f"cannot connect: {exc.strerror or type(exc).__name__}") from None
        resp = conn.getresponse()
        length = resp.getheader("content-length")
        if length and length.isdigit() and int(length) > max_bytes:
            raise FetchError(shown, "too_large", f"page of {int(length)} bytes, larger than {max_bytes} bytes")
        chunks, size = [], 0
        while True:
            chunk = resp.read1(CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise FetchError(shown, "too_large", f"page larger than {max_bytes} bytes")
            chunks.append(chunk)
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, b"".join(chunks), url)
    except _Expired:
        if progress[0] == 0:
            raise FetchError(shown, "timeout", f"no answer within {deadline:g}s") from None
        raise FetchError(shown, "deadline", f"the response did not finish within {deadline:g}s "
                                            f"({progress[0]} bytes received)") from None
    except (http.client.HTTPException, OSError) as exc:
        raise FetchError(shown, "read", f"the connection broke: {type(exc).__name__} {exc}"[:300]) from None
    finally:
        if resp is not None:
            resp.close()
        conn.close()


def get_text(url: str, *, deadline: float, max_bytes: int, params: dict | None = None,
             accept: str = "*/*", auth: tuple[str, str] | None = None, ca_file: str | None = None) -> str:
    """The body of ``url`` as text when the status is 200; else FetchError (kind unauthorized for 401
    and 403, http for any other status)."""
    resp = get(url, deadline=deadline, max_bytes=max_bytes, params=params, accept=accept, auth=auth, ca_file=ca_file)
    if resp.status in (401, 403):
        raise FetchError(redact(resp.url), "unauthorized",
                         f"HTTP {resp.status}: unauthorized ({'credentials refused' if auth or '@' in resp.url else 'no credentials sent'})")
    if resp.status != 200:
        raise FetchError(redact(resp.url), "http", f"HTTP {resp.status}")
    return resp.text()
