"""A JMX exporter (or Jolokia) endpoint served over https with an expired certificate, signed by the CA
the collector trusts (``jmx_ca_file``): the source fails as ``tls``, and ``collect --once`` names the
endpoint, with the basic-auth password of its URL masked, and says the certificate has expired.

The certificate is made with OpenSSL's own ``ca`` command, valid 2020-01-01 to 2020-01-02 (tests/tlscerts.py);
the server is Python's own https server, since a real JMX exporter cannot be given dates."""

from __future__ import annotations

import http.server
import ssl
import subprocess
import threading

import yaml

from clirun import run_cli
from tlscerts import expired_server_cert, make_certs

PW = "Expired-Cert-Secret-42"


def test_an_expired_certificate_names_the_endpoint_and_hides_the_password(tmp_path):
    certs = make_certs(tmp_path / "tls")
    expired = expired_server_cert(certs)
    check = subprocess.run(["openssl", "verify", "-CAfile", str(certs.ca), str(expired)], capture_output=True,
                           text=True, timeout=60)
    assert "certificate has expired" in check.stdout + check.stderr  # OpenSSL's own verdict, independent

    class Page(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            body = b"kafka_log_logcleaner_deadthreadcount 0.0\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(expired, certs.server_key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    endpoint = f"127.0.0.1:{server.server_address[1]}/metrics"
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text(yaml.safe_dump({"clusters": [{"name": "c", "brokers": [
        {"id": "1", "jmx_url": f"https://monitor:{PW}@{endpoint}", "jmx_ca_file": str(certs.ca)}]}]}))
    try:
        proc = run_cli("collect", "--once", "--config", str(cfg))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
    assert proc.returncode == 1, proc.stderr
    assert PW not in proc.stdout + proc.stderr
    assert f"https://monitor:***@{endpoint}" in proc.stderr and "certificate has expired" in proc.stderr, proc.stderr
    assert 'kafka_compaction_source_errors_total{cluster="c",error="tls",kind="jmx",source="jmx:c:1"} 1.0' \
        in proc.stdout
