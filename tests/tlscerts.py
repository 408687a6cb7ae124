"""Certificates for tests, made with the ``openssl`` CLI: a CA, a server certificate for 127.0.0.1
signed by it, and a client certificate (mutual TLS)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA that signed none of these


def _run(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(d: Path) -> Certs:
    d.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for ca in ("ca", "other-ca"):
        _run("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.crt", "-days", "2", "-subj", f"/CN={ca}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        (d / f"{name}.ext").write_text(ext)
        _run("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
        _run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=d)
    return Certs(d / "ca.crt", d / "server.crt", d / "server.key", d / "client.crt", d / "client.key",
                 d / "other-ca.crt")


def expired_server_cert(certs: Certs) -> Path:
    """A certificate for 127.0.0.1 (the key of ``certs.server_key``) signed by ``certs.ca`` and valid from
    2020-01-01 to 2020-01-02 only: expired. ``openssl ca`` is the CLI that takes both dates (OpenSSL 3.0's
    ``x509 -req`` only counts days from now)."""
    d = certs.ca.parent
    (d / "index.txt").write_text("")
    (d / "expired.serial").write_text("1000\n")
    (d / "ca.cnf").write_text("[ca]\ndefault_ca = c\n[c]\ndatabase = index.txt\nnew_certs_dir = .\n"
                              "serial = expired.serial\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n")
    _run("req", "-new", "-key", certs.server_key.name, "-out", "expired.csr", "-subj", "/CN=expired", cwd=d)
    _run("ca", "-batch", "-config", "ca.cnf", "-cert", certs.ca.name, "-keyfile", "ca.key", "-in", "expired.csr",
         "-out", "expired.crt", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
         "-extfile", "server.ext", "-notext", cwd=d)
    return d / "expired.crt"
