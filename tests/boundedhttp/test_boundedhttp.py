"""The one bounded HTTP GET against every fault of tests/faultserver.py: each ends in its own error
kind, and no fault keeps the fetch past its deadline or its memory past the byte cap.

Memory is measured as the peak RSS growth (``resource.getrusage``'s ru_maxrss) of a fresh process
that does nothing but the fetches: a generous bound, far below what an unbounded read reaches."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading

import pytest

from boundedhttp import FetchError, get, get_text, redact
from faultserver import BOMB_EXPANDED, GOOD, FaultServer


@pytest.fixture
def fs():
    server = FaultServer()
    yield server
    server.close()


def fetch_in_thread(url: str, **kw):
    """get_text on a thread joined with a generous bound (a hang guard, not a timing): the result or the error."""
    out = {}

    def run():
        try:
            out["text"] = get_text(url, **kw)
        except FetchError as exc:
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), f"the fetch of {url} did not end"
    return out


@pytest.mark.parametrize("mode, kind", [("500", "http"), ("hang", "timeout"), ("huge", "too_large"),
                                        ("endless", "too_large"), ("claims_huge", "too_large"),
                                        ("drip", "deadline"), ("drip_headers", "deadline"), ("close", "read")])
def test_each_fault_is_its_own_error_kind_naming_the_endpoint(fs, mode, kind):
    fs.set_mode(mode)
    got = fetch_in_thread(fs.url, deadline=1, max_bytes=1 << 20)
    assert "error" in got, f"{mode}: a page came back: {got.get('text', '')[:100]!r}"
    assert got["error"].kind == kind and got["error"].endpoint == fs.url and fs.url in str(got["error"])


def test_good_html_garbage_and_bomb_pages_come_back_as_sent(fs):
    """What is not a transport fault is the caller's to judge (parse errors): the bytes as sent, a
    gzip body never inflated (identity was asked for)."""
    assert get_text(fs.url, deadline=5, max_bytes=1 << 20) == GOOD.decode()
    fs.set_mode("html")
    assert "Please log in" in get_text(fs.url, deadline=5, max_bytes=1 << 20)
    assert fs.last_headers.get("Accept-Encoding") == "identity"
    fs.set_mode("bomb")
    resp = get(fs.url, deadline=10, max_bytes=4 << 20)
    assert resp.headers["content-encoding"] == "gzip" and len(resp.body) < BOMB_EXPANDED // 100


def test_a_refused_connection_is_connect(fs):
    url = fs.url
    fs.close()
    with pytest.raises(FetchError) as exc:
        get_text(url, deadline=2, max_bytes=100)
    assert exc.value.kind == "connect"


def test_credentials_in_the_url_are_sent_and_never_printed(fs):
    url = fs.url.replace("http://", "http://monitor:s3cret@")
    assert get_text(url, deadline=5, max_bytes=1 << 20) == GOOD.decode()
    assert fs.last_headers["Authorization"] == "Basic " + base64.b64encode(b"monitor:s3cret").decode()
    fs.set_mode("500")
    with pytest.raises(FetchError) as exc:
        get_text(url, deadline=5, max_bytes=1 << 20)
    assert "s3cret" not in str(exc.value) and "monitor:***@" in str(exc.value)
    assert redact(url) == fs.url.replace("http://", "http://monitor:***@")



def test_auth_is_sent_a_refusal_is_unauthorized_and_the_password_never_printed(fs):
    assert get_text(fs.url, deadline=5, max_bytes=1 << 20, auth=("monitor", "pa:ss")) == GOOD.decode()
    assert fs.last_headers["Authorization"] == "Basic " + base64.b64encode(b"monitor:pa:ss").decode()
    # the auth setting wins over a user part in the URL
    get_text(fs.url.replace("http://", "http://other:x@"), deadline=5, max_bytes=1 << 20, auth=("monitor", "pa:ss"))
    assert fs.last_headers["Authorization"] == "Basic " + base64.b64encode(b"monitor:pa:ss").decode()
    fs.set_mode("403")
    with pytest.raises(FetchError) as exc:
        get_text(fs.url, deadline=5, max_bytes=1 << 20, auth=("monitor", "pa:ss"))
    assert exc.value.kind == "unauthorized" and "pa:ss" not in str(exc.value) and fs.url in str(exc.value)


def test_an_unusable_ca_file_is_a_tls_error_naming_it(fs, tmp_path):
    missing = tmp_path / "no-such-ca.pem"
    with pytest.raises(FetchError) as exc:
        get_text(fs.url.replace("http://", "https://"), deadline=5, max_bytes=1 << 20, ca_file=str(missing))
    assert exc.value.kind == "tls" and str(missing) in str(exc.value)


def test_a_plain_http_server_is_not_taken_for_tls(fs):
    with pytest.raises(FetchError) as exc:  # an https URL to a plain server: the TLS handshake fails
        get_text(fs.url.replace("http://", "https://"), deadline=5, max_bytes=1 << 20)
    assert exc.value.kind == "tls"


MEASURE = r"""
import json, resource, sys
from boundedhttp import FetchError, get
url, cap, deadline = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
get(url.replace("/metrics", "/warmup"), deadline=10, max_bytes=cap)  # imports and buffers paid for first
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("ready", flush=True)
sys.stdin.readline()  # the test has switched the server to the fault
kinds = []
for _ in range(3):
    try:
        get(url, deadline=deadline, max_bytes=cap)
        kinds.append("ok")
    except FetchError as exc:
        kinds.append(exc.kind)
print(json.dumps({"before": before, "kinds": kinds, "growth_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before}))
"""


# the drip's deadline is 1 s, not 5: a byte every 0.05 s grows nothing, and three fetches waited 15 s
@pytest.mark.parametrize("mode, kind, deadline",
                         [("endless", "too_large", 5), ("drip", "deadline", 1), ("bomb", "ok", 5)])
def test_memory_stays_bounded_by_the_cap(fs, mode, kind, deadline):
    """Three fetches of an endless page, a drip and a 256 MiB gzip bomb with a 32 MiB cap: the fetching
    process's peak RSS grows by less than 192 MiB (the body and its join are two caps; an unbounded
    read of the endless page grows by gigabytes within the 5 s deadline, an inflated bomb by 256 MiB)."""
    cap = 32 << 20
    fs.set_mode("ok")
    proc = subprocess.Popen([sys.executable, "-c", MEASURE, fs.url, str(cap), str(deadline)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()  # the warm-up fetch was served "ok"
        fs.set_mode(mode)
        out, err = proc.communicate("go\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    got = json.loads(out)
    assert got["kinds"] == [kind] * 3
    assert got["growth_kib"] < 192 * 1024, got
