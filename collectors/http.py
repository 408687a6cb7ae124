"""A bounded HTTP GET: per-request timeouts, a cap on the body size, errors that name the endpoint."""

from __future__ import annotations

import requests


class FetchError(RuntimeError):
    """A source could not be read; ``kind`` is what the errors_total counter is labelled with."""

    def __init__(self, endpoint: str, kind: str, reason: str):
        self.endpoint, self.kind, self.reason = endpoint, kind, reason
        super().__init__(f"{endpoint}: {reason}")


def get_text(url: str, *, timeout: float, max_bytes: int, session: requests.Session | None = None) -> str:
    """The body of ``url`` as text; FetchError(kind=timeout|connect|http|too_large|read)."""
    s = session or requests
    try:
        with s.get(url, timeout=(min(timeout, 3.0), timeout), stream=True) as resp:
            if resp.status_code != 200:
                raise FetchError(url, "http", f"HTTP {resp.status_code}")
            chunks, size = [], 0
            for chunk in resp.iter_content(65536):
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(url, "too_large", f"page larger than {max_bytes} bytes")
                chunks.append(chunk)
            return b"".join(chunks).decode(resp.encoding or "utf-8", errors="replace")
    except requests.Timeout:
        raise FetchError(url, "timeout", f"no answer within {timeout}s") from None
    except requests.ConnectionError as exc:
        raise FetchError(url, "connect", f"cannot connect: {exc.__class__.__name__}") from None
    except requests.RequestException as exc:
        raise FetchError(url, "read", str(exc)) from None
