"""The collector's ``--web.config.file``: TLS and basic auth for /metrics, in the format of Prometheus'
exporter-toolkit (``web/tls_config.go``), so one file serves node_exporter, kafka_exporter and this::

    tls_server_config:
      cert_file: tls.crt            # relative paths are relative to the web config file (as exporter-toolkit)
      key_file: tls.key
      client_auth_type: RequireAndVerifyClientCert   # optional: mutual TLS
      client_ca_file: ca.crt
      min_version: TLS12            # TLS12 (default) or TLS13
    basic_auth_users:
      prometheus: $2y$10$...        # bcrypt hashes only, as exporter-toolkit

What is read here is the file's meaning, checked whole at start: an unknown key, a wrong shape, a
hash that is not bcrypt, a missing file is a ``WebConfigError`` naming the file and the key, and the
collector refuses to start (exit 2). The TLS keys themselves are loaded by the edge that serves
(``collectors.serving.webserver``), which names them in its own error the same way.

bcrypt is verified by the ``bcrypt`` package where installed, else by the system's ``crypt(3)``
(libxcrypt, in every glibc distribution since 2018, which implements ``$2a$``/``$2b$``/``$2y$``), so
no dependency is added; with neither, a ``basic_auth_users`` section is refused at start, saying so.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

CLIENT_AUTH_TYPES = ("NoClientCert", "RequestClientCert", "RequireAnyClientCert", "VerifyClientCertIfGiven",
                     "RequireAndVerifyClientCert")
SUPPORTED_CLIENT_AUTH = ("NoClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert")
TLS_VERSIONS = ("TLS12", "TLS13")  # exporter-toolkit also names TLS10 and TLS11: refused, both are deprecated
BCRYPT = re.compile(r"^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$")
TLS_KEYS = {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version"}
# exporter-toolkit keys this collector does not implement: named as such rather than "unknown"
NOT_IMPLEMENTED = {"tls_server_config": {"cert", "key", "client_ca", "cipher_suites", "curve_preferences",
                                         "max_version", "prefer_server_cipher_suites", "client_allowed_sans"},
                   "": {"http_server_config", "rate_limit"}}
MAX_WEB_CONFIG_BYTES = 1 << 20


class WebConfigError(ValueError):
    def __init__(self, file: str, key: str, reason: str):
        self.file, self.key, self.reason = file, key, reason
        super().__init__(f"{file}: {key}: {reason}")


@dataclass(frozen=True)
class TlsServerConfig:
    cert_file: str
    key_file: str
    client_auth_type: str = "NoClientCert"
    client_ca_file: str | None = None
    min_version: str = "TLS12"


@dataclass(frozen=True)
class WebConfig:
    file: str
    tls: TlsServerConfig | None = None
    basic_auth_users: dict = field(default_factory=dict)  # user -> bcrypt hash


def _read(path: str) -> str:
    from monitor.fileio.regularfile import NotRegularFile, open_regular

    try:
        with open_regular(path) as fh:
            raw = fh.read(MAX_WEB_CONFIG_BYTES + 1)
    except NotRegularFile as exc:
        raise WebConfigError(path, "(file)", f"not a regular file ({exc.what})") from None
    except OSError as exc:
        raise WebConfigError(path, "(file)", f"cannot read: {exc.strerror or type(exc).__name__}") from None
    if len(raw) > MAX_WEB_CONFIG_BYTES:
        raise WebConfigError(path, "(file)", f"larger than {MAX_WEB_CONFIG_BYTES} bytes: not a web config")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WebConfigError(path, "(file)", f"not UTF-8 text (byte {exc.start})") from None


def _check_keys(file: str, where: str, d: dict, allowed: set) -> None:
    for k in d:
        if k in NOT_IMPLEMENTED.get(where, ()):
            raise WebConfigError(file, f"{where}.{k}" if where else str(k),
                                 "an exporter-toolkit setting this collector does not implement")
        if k not in allowed:
            raise WebConfigError(file, f"{where}.{k}" if where else str(k),
                                 f"unknown key (allowed: {', '.join(sorted(allowed))})")


def load_web_config(path: str | os.PathLike) -> WebConfig:
    """The web config at ``path``, checked whole (WebConfigError on the first problem)."""
    import yaml

    file = str(path)
    try:
        data = yaml.safe_load(_read(file))
    except yaml.YAMLError as exc:
        raise WebConfigError(file, "(yaml)", str(exc).replace("\n", " ")) from None
    if data is None:
        data = {}  # an empty file: exporter-toolkit serves plain HTTP without auth, so does this
    if not isinstance(data, dict):
        raise WebConfigError(file, "(top level)", f"expected a mapping, got {type(data).__name__}")
    _check_keys(file, "", data, {"tls_server_config", "basic_auth_users"})
    base = Path(file).resolve().parent
    tls = None
    t = data.get("tls_server_config")
    if t is not None:
        if not isinstance(t, dict):
            raise WebConfigError(file, "tls_server_config", "expected a mapping of cert_file, key_file, ...")
        _check_keys(file, "tls_server_config", t, TLS_KEYS)
        for k in ("cert_file", "key_file"):
            if not isinstance(t.get(k), str) or not t.get(k):
                raise WebConfigError(file, f"tls_server_config.{k}", "is required (a path)")
        auth = t.get("client_auth_type", "NoClientCert")
        if auth not in CLIENT_AUTH_TYPES:
            raise WebConfigError(file, "tls_server_config.client_auth_type",
                                 f"expected one of {', '.join(SUPPORTED_CLIENT_AUTH)}, got {auth!r}")
        if auth not in SUPPORTED_CLIENT_AUTH:
            raise WebConfigError(file, "tls_server_config.client_auth_type",
                                 f"{auth} is not implemented (Python's ssl verifies a client certificate it asks "
                                 f"for): use one of {', '.join(SUPPORTED_CLIENT_AUTH)}")
        ca = t.get("client_ca_file")
        if auth != "NoClientCert" and not ca:
            raise WebConfigError(file, "tls_server_config.client_ca_file", f"is required with {auth}")
        if ca is not None and not isinstance(ca, str):
            raise WebConfigError(file, "tls_server_config.client_ca_file", "expected a path")
        version = t.get("min_version", "TLS12")
        if version not in TLS_VERSIONS:
            raise WebConfigError(file, "tls_server_config.min_version",
                                 f"expected one of {', '.join(TLS_VERSIONS)}, got {version!r}")
        tls = TlsServerConfig(str(base / t["cert_file"]), str(base / t["key_file"]), auth,
                              str(base / ca) if ca else None, version)
    users = data.get("basic_auth_users") or {}
    if not isinstance(users, dict):
        raise WebConfigError(file, "basic_auth_users", "expected a mapping of user -> bcrypt hash")
    for user, h in users.items():
        if not isinstance(user, str) or not user or ":" in user:
            raise WebConfigError(file, f"basic_auth_users.{user}", "a user name is a non-empty string without ':'")
        if not isinstance(h, str) or not BCRYPT.match(h):
            # the value is not shown: it may be a password pasted where its hash belongs
            raise WebConfigError(file, f"basic_auth_users.{user}", "expected a bcrypt hash ($2y$10$ and 53 "
                                 "characters, as `htpasswd -nBC 10 '' | tr -d ':\\n'` prints), got something else "
                                 "(not shown)")
    if users and bcrypt_backend() is None:
        raise WebConfigError(file, "basic_auth_users", "cannot check bcrypt hashes here: neither the bcrypt package "
                             "nor a crypt(3) with bcrypt (libxcrypt) is available (pip install bcrypt)")
    return WebConfig(file, tls, dict(users))


# ------------------------------------------------------------------ bcrypt


_crypt_lock = threading.Lock()  # crypt(3) returns a static buffer


def _libcrypt():
    try:
        lib = ctypes.CDLL("libcrypt.so.1")
    except OSError:
        return None
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    # the OpenBSD test vector (Openwall's crypt_blowfish wrapper.c): a crypt without bcrypt fails it
    probe = b"$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
    return lib if lib.crypt(b"U*U", probe) == probe else None


def bcrypt_backend():
    """``checkpw(password: bytes, hash: bytes) -> bool`` from the bcrypt package, else crypt(3); None
    when neither can check bcrypt."""
    try:
        import bcrypt  # type: ignore[import-not-found]

        return lambda pw, h: bcrypt.checkpw(pw, h)
    except ImportError:
        pass
    lib = _libcrypt()
    if lib is None:
        return None

    def checkpw(pw: bytes, h: bytes) -> bool:
        if b"\0" in pw:
            return False
        with _crypt_lock:
            out = lib.crypt(pw, h)
        return out is not None and hmac.compare_digest(out, h)

    return checkpw


# a well-formed hash nobody's password matches: an unknown user costs the same bcrypt as a known one
_DUMMY = b"$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DSmV5CmSRGfS2GFwvFRuG"


class BasicAuth:
    """Checks ``Authorization: Basic`` against ``basic_auth_users``. A bcrypt costs ~0.1 s, so a user
    and password already found good are remembered (by a salted SHA-256, never in clear) as
    exporter-toolkit does; a wrong one is checked in full every time."""

    def __init__(self, users: dict, checkpw=None):
        self.users = {u: h.encode() for u, h in users.items()}
        self.checkpw = checkpw or bcrypt_backend()
        self._salt = os.urandom(16)
        self._good: set[bytes] = set()
        self._lock = threading.Lock()

    def check(self, header: str | None) -> bool:
        import base64
        import binascii

        if not header or not header.startswith("Basic "):
            return False
        try:
            user, sep, pw = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        if not sep:
            return False
        h = self.users.get(user)
        key = hashlib.sha256(self._salt + (h or b"") + b"\0" + user.encode() + b"\0" + pw.encode()).digest()
        with self._lock:
            if h is not None and key in self._good:
                return True
        ok = self.checkpw(pw.encode(), h if h is not None else _DUMMY) and h is not None
        if ok:
            with self._lock:
                if len(self._good) > 1000:
                    self._good.clear()
                self._good.add(key)
        return ok
