"""/metrics over TLS and basic auth from a web config (exporter-toolkit's format), checked with a real
TLS client (Python's ssl, certificates made by the openssl CLI) and a real Prometheus scraping with
basic_auth and tls_config; a web config that cannot be used stops the collector at start (exit 2)."""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import shutil
import socket
import ssl
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest
import yaml
from prometheus_client import CollectorRegistry, Gauge

from collectors.export.exposition import RenderedExposition
from collectors.serving import webserver
from collectors.serving.webconfig import load_web_config
from procs import free_port, process
from tlscerts import make_certs
from webauth import bcrypt_hash
from waiting import wait_for

PW = "Scrape-Pw-5150"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.fail("the openssl CLI is missing (Debian's openssl package)")
    return make_certs(tmp_path_factory.mktemp("certs"))


def web_config(path, certs, **tls):
    path.write_text(yaml.safe_dump({
        "tls_server_config": {"cert_file": str(certs.server_cert), "key_file": str(certs.server_key), **tls},
        "basic_auth_users": {"prometheus": bcrypt_hash(PW)}}))
    return path


def get(port: int, ctx: ssl.SSLContext, auth: tuple[str, str] | None = None) -> tuple[int, dict, bytes]:
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
    headers = {"Authorization": "Basic " + base64.b64encode(":".join(auth).encode()).decode()} if auth else {}
    try:
        c.request("GET", "/metrics", headers=headers)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def client_ctx(cafile, cert=None, key=None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(cafile))
    if cert:
        ctx.load_cert_chain(str(cert), str(key))
    return ctx


def collect(tmp_path, port, web_file) -> list[str]:
    (tmp_path / "logdir").mkdir(exist_ok=True)
    return [sys.executable, "-m", "cli", "collect", "--log-dir", str(tmp_path / "logdir"), "--address", "127.0.0.1",
            "--port", str(port), "--web.config.file", str(web_file)]


def test_tls_and_basic_auth_with_a_real_tls_client(tmp_path, certs):
    port = free_port()
    web = web_config(tmp_path / "web.yml", certs)
    ctx = client_ctx(certs.ca)
    with process(collect(tmp_path, port, web), tmp_path / "collector.log"):
        wait_for(lambda: _answers(port, ctx), 60, "the collector answering over TLS")
        status, headers, _ = get(port, ctx)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic")
        assert get(port, ctx, ("prometheus", PW + "x"))[0] == 401
        assert get(port, ctx, ("someone", PW))[0] == 401
        status, _, body = get(port, ctx, ("prometheus", PW))
        assert status == 200 and b"kafka_compaction_source_up" in body
        # gzip and keep-alive through TLS and basic auth: two scrapes on one TLS connection
        c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
        try:
            basic = {"Authorization": "Basic " + base64.b64encode(f"prometheus:{PW}".encode()).decode()}
            pages = []
            for _ in range(2):
                c.request("GET", "/metrics", headers={**basic, "Accept-Encoding": "gzip"})
                r = c.getresponse()
                pages.append((r.status, r.getheader("Content-Encoding"), r.read(), c.sock))
            assert [p[:2] for p in pages] == [(200, "gzip")] * 2 and pages[0][3] is pages[1][3]
            assert b"kafka_compaction_source_up" in gzip.decompress(pages[1][2])
        finally:
            c.close()
        # a client that trusts another CA refuses the collector's certificate
        with pytest.raises(ssl.SSLCertVerificationError):
            get(port, client_ctx(certs.other_ca), ("prometheus", PW))
        # plain HTTP on the TLS port gets no page
        with pytest.raises((http.client.HTTPException, OSError)):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            c.request("GET", "/metrics")
            c.getresponse().read()
        # a connection that never starts its handshake holds up no one else's scrape
        with socket.create_connection(("127.0.0.1", port)):
            assert get(port, ctx, ("prometheus", PW))[0] == 200
    log = (tmp_path / "collector.log").read_text()
    assert f"serving https://127.0.0.1:{port}/metrics" in log and "basic auth (1 user(s))" in log
    assert PW not in log


def _answers(port, ctx):
    try:
        return get(port, ctx)[0] == 401
    except (OSError, http.client.HTTPException):
        return False


def test_mutual_tls_requires_a_client_certificate_from_the_ca(tmp_path, certs):
    web = load_web_config(web_config(tmp_path / "web.yml", certs, client_auth_type="RequireAndVerifyClientCert",
                                     client_ca_file=str(certs.ca)))
    reg = CollectorRegistry()
    Gauge("probe_value", "a value", registry=reg).set(7)
    page = RenderedExposition(reg)
    page.render()
    httpd = webserver.start(page, "127.0.0.1", 0, *webserver.prepare(web))
    try:
        port = httpd.server_address[1]
        status, _, body = get(port, client_ctx(certs.ca, certs.client_cert, certs.client_key), ("prometheus", PW))
        assert status == 200 and b"probe_value 7.0" in body
        with pytest.raises((ssl.SSLError, OSError, http.client.HTTPException)):
            get(port, client_ctx(certs.ca), ("prometheus", PW))  # no client certificate
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("case", ["malformed", "unreadable", "missing_cert", "key_of_another_cert", "plain_password"])
def test_a_web_config_that_cannot_be_used_stops_the_collector(tmp_path, certs, case):
    web = tmp_path / "web.yml"
    expect = {"malformed": "(yaml)", "unreadable": "not a regular file", "missing_cert": "tls_server_config.cert_file",
              "key_of_another_cert": "tls_server_config.cert_file/key_file",
              "plain_password": "basic_auth_users.prometheus"}[case]
    if case == "malformed":
        web.write_text("tls_server_config: {cert_file: [\n")
    elif case == "unreadable":
        web.mkdir()
    elif case == "missing_cert":
        web.write_text(f"tls_server_config: {{cert_file: nope.crt, key_file: {certs.server_key}}}\n")
    elif case == "key_of_another_cert":
        web.write_text(f"tls_server_config: {{cert_file: {certs.server_cert}, key_file: {certs.client_key}}}\n")
    else:
        web.write_text(f"basic_auth_users: {{prometheus: {PW}}}\n")
    port = free_port()
    p = subprocess.run(collect(tmp_path, port, web), capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert str(web) in p.stderr and expect in p.stderr and "web config error" in p.stderr
    assert PW not in p.stderr + p.stdout


def test_prometheus_scrapes_over_tls_with_basic_auth(tmp_path, certs):
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.fail("prometheus is missing: ./dev installs Debian's prometheus package")
    cport, pport = free_port(), free_port()
    web = web_config(tmp_path / "web.yml", certs)
    (tmp_path / "scrape-password").write_text(PW)
    (tmp_path / "wrong-password").write_text(PW + "-wrong")
    job = {"scheme": "https", "tls_config": {"ca_file": str(certs.ca)},
           "static_configs": [{"targets": [f"127.0.0.1:{cport}"]}]}
    prom_cfg = {"global": {"scrape_interval": "1s"}, "scrape_configs": [
        {"job_name": "good", **job, "basic_auth": {"username": "prometheus",
                                                   "password_file": str(tmp_path / "scrape-password")}},
        {"job_name": "wrong", **job, "basic_auth": {"username": "prometheus",
                                                    "password_file": str(tmp_path / "wrong-password")}},
        {"job_name": "untrusted", **job, "tls_config": {"ca_file": str(certs.other_ca)},
         "basic_auth": {"username": "prometheus", "password_file": str(tmp_path / "scrape-password")}}]}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(prom_cfg))
    prom_cmd = [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"]
    prom = f"http://127.0.0.1:{pport}"
    with process(collect(tmp_path, cport, web), tmp_path / "collector.log"), \
            process(prom_cmd, tmp_path / "prometheus.log", f"{prom}/-/ready"):
        def targets():
            with urllib.request.urlopen(f"{prom}/api/v1/targets", timeout=5) as r:
                active = json.load(r)["data"]["activeTargets"]
            seen = {t["labels"]["job"]: (t["health"], t["lastError"]) for t in active}
            return seen if len(seen) == 3 and all(h != "unknown" for h, _ in seen.values()) \
                and seen["good"][0] == "up" else None

        seen = wait_for(targets, 90, "Prometheus scraping the collector over TLS with basic auth")
        assert seen["wrong"][0] == "down" and "401" in seen["wrong"][1]
        assert seen["untrusted"][0] == "down" and "certificate" in seen["untrusted"][1]

        def series():
            q = urllib.parse.quote('kafka_compaction_source_up{job="good"}')
            with urllib.request.urlopen(f"{prom}/api/v1/query?query={q}", timeout=5) as r:
                return json.load(r)["data"]["result"]

        assert wait_for(series, 60, "the collector's series in Prometheus")[0]["value"][1] == "1"
