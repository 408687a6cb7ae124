"""Certificates for the local cluster's TLS, made with the JDK's own ``keytool`` (no openssl, no
Python crypto package): a private CA, one PKCS12 keystore per broker signed by it (SAN
``127.0.0.1`` and ``localhost``, usable as server and as client certificate), one PKCS12 truststore
holding the CA, and the CA as PEM for librdkafka's ``ssl.ca.location``.

Store passwords reach keytool through its ``-storepass:env`` form, so they never stand on a command
line (``ps`` shows command lines to every local user). The files are written with mode 0600.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CA_ALIAS = "ca"
KEY_ALIAS = "broker"
VALIDITY_DAYS = "30"
# The broker certificate's subject; the controller listener maps it to the principal
# User:kafka-broker (see localkafka.cluster BROKER_PRINCIPAL_RULE).
BROKER_DNAME = "CN=kafka-broker-{node},O=compaction-monitor local cluster"


# keytool is a short-lived JVM: the C1 compiler and serial GC start it faster
FAST_JVM = ["-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"]


class TlsError(RuntimeError):
    """keytool failed or is missing."""


@dataclass(frozen=True)
class TlsFiles:
    """Where the cluster's TLS material is; the store password is in ``store_password_file``."""

    ca_pem: str
    truststore: str
    keystores: dict  # node id (str) -> keystore path
    store_password_file: str


def keytool() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "keytool").exists():
        return str(Path(home) / "bin" / "keytool")
    found = shutil.which("keytool")
    if not found:
        raise TlsError("no `keytool` on PATH and no JAVA_HOME: install a Java 17+ JDK/runtime")
    return found


def write_secret(path: Path, value: str) -> Path:
    """``value`` into ``path`` with mode 0600 from its creation (never world-readable, not even briefly)."""
    path = Path(path)
    if path.exists():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return path


def new_password() -> str:
    """A random password of URL-safe characters (no quote, no backslash: it goes into a JAAS line)."""
    return secrets.token_urlsafe(24)


def _kt(args: list[str], password: str) -> None:
    env = {**os.environ, "KT_STOREPASS": password}
    proc = subprocess.run([keytool(), *FAST_JVM, *args], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise TlsError(f"keytool {args[0]} failed ({proc.returncode}): {proc.stdout[-1500:]} {proc.stderr[-1500:]}")


def _store(path: Path) -> list[str]:
    return ["-keystore", str(path), "-storetype", "PKCS12", "-storepass:env", "KT_STOREPASS"]


def planned(directory: Path, nodes: list[int]) -> TlsFiles:
    """Where ``make_certificates`` puts its files; draws the store password now (so that the brokers'
    configs can be written while keytool works)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    pw_file = directory / "store.password"
    if not pw_file.exists():
        write_secret(pw_file, new_password())
    return TlsFiles(ca_pem=str(directory / "ca.pem"), truststore=str(directory / "truststore.p12"),
                    keystores={str(n): str(directory / f"broker-{n}.p12") for n in nodes},
                    store_password_file=str(pw_file))


def store_password(files: TlsFiles) -> str:
    return Path(files.store_password_file).read_text()


def make_certificates(directory: Path, nodes: list[int]) -> TlsFiles:
    """A CA, one keystore per node and a truststore under ``directory`` (created, mode 0700)."""
    files = planned(directory, nodes)
    directory = Path(directory)
    password = store_password(files)
    ca_store, ca_pem, trust = directory / "ca.p12", directory / "ca.pem", directory / "truststore.p12"
    _kt(["-genkeypair", "-alias", CA_ALIAS, "-dname", "CN=compaction-monitor local CA", "-keyalg", "RSA",
         "-keysize", "2048", "-validity", VALIDITY_DAYS, "-ext", "bc:c", *_store(ca_store)], password)
    _kt(["-exportcert", "-rfc", "-alias", CA_ALIAS, "-file", str(ca_pem), *_store(ca_store)], password)
    _kt(["-importcert", "-noprompt", "-alias", CA_ALIAS, "-file", str(ca_pem), *_store(trust)], password)

    def one(node: int) -> tuple[str, str]:
        ks, csr, pem = directory / f"broker-{node}.p12", directory / f"broker-{node}.csr", directory / f"broker-{node}.pem"
        _kt(["-genkeypair", "-alias", KEY_ALIAS, "-dname", BROKER_DNAME.format(node=node), "-keyalg", "RSA",
             "-keysize", "2048", "-validity", VALIDITY_DAYS, *_store(ks)], password)
        _kt(["-certreq", "-alias", KEY_ALIAS, "-file", str(csr), *_store(ks)], password)
        _kt(["-gencert", "-rfc", "-alias", CA_ALIAS, "-infile", str(csr), "-outfile", str(pem),
             "-validity", VALIDITY_DAYS, "-ext", "SAN=ip:127.0.0.1,dns:localhost",
             "-ext", "KU=digitalSignature,keyEncipherment", "-ext", "EKU=serverAuth,clientAuth",
             *_store(ca_store)], password)
        _kt(["-importcert", "-noprompt", "-alias", CA_ALIAS, "-file", str(ca_pem), *_store(ks)], password)
        _kt(["-importcert", "-noprompt", "-alias", KEY_ALIAS, "-file", str(pem), *_store(ks)], password)
        csr.unlink()
        return str(node), str(ks)

    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
        list(pool.map(one, nodes))
    for p in directory.iterdir():
        os.chmod(p, 0o600)
    return files
