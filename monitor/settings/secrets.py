"""Secrets kept out of ``monitor.yaml``: ``${provider:[path:]key}`` references, resolved at load.

Why: a SASL password, a JMX exporter's basic-auth password or a TLS key password must be
deployable without writing it into the YAML (which lives in git, a ConfigMap, a ticket). The one
mechanism is Kafka's own config-provider syntax (``org.apache.kafka.common.config.ConfigTransformer``,
``DEFAULT_PATTERN = \\$\\{([^}]*?):(([^}]*?):)?([^}]*?)\\}``), which SREs already write in
``server.properties`` and Connect configs, with Kafka's three providers:

* ``${env:NAME}``: the environment variable ``NAME`` (Kafka's ``EnvVarConfigProvider``);
* ``${directory:DIR:NAME}``: the whole content of the file ``DIR/NAME``, as Kubernetes and Docker
  mount secrets (Kafka's ``DirectoryConfigProvider``); one trailing newline is dropped (an
  ``echo pw > file`` would otherwise put it in the password, which Kafka would keep);
* ``${file:PATH:KEY}``: the value of ``KEY`` in the Java properties file ``PATH`` (Kafka's
  ``FileConfigProvider``).

A reference may stand anywhere inside any string value of the file, so the same form serves
librdkafka's ``client:`` section (``sasl.password: ${env:KAFKA_PASSWORD}``) and the password of a
URL (``jmx_url: http://monitor:${directory:/run/secrets:jmx}@kafka-1:7071/metrics``). Only string
values are resolved (a key or a number is never a secret). Like Kafka, there is no escape: a
literal ``${a:b}`` cannot be written.

A reference that cannot be resolved (variable not set, file unreadable, key absent, unknown
provider) is a config error naming the key path and the reference, never a value.

A secret its user reads again at every use (the JMX exporter's ``jmx_password``: a rotated file is
picked up without a restart) is resolved here only to check it (``resolve``'s ``deferred``) and kept as
written; its user calls ``resolve_string``.
"""

from __future__ import annotations

import os
import re

from monitor.fileio.regularfile import NotRegularFile, open_regular

# Kafka's ConfigTransformer.DEFAULT_PATTERN (kafka-clients 4.x): provider, optional path, key
REFERENCE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
PROVIDERS = ("env", "directory", "file")
MAX_SECRET_FILE_BYTES = 1 << 20  # a secret or a properties file of secrets is small; more is some other file


class SecretError(ValueError):
    """One reference that cannot be resolved: ``reason`` names the reference, never a value."""


def has_reference(value) -> bool:
    return isinstance(value, str) and REFERENCE.search(value) is not None


def _read_file(path: str) -> str:
    try:
        with open_regular(path) as fh:
            raw = fh.read(MAX_SECRET_FILE_BYTES + 1)
    except NotRegularFile as exc:
        raise SecretError(f"{path} is not a regular file ({exc.what})") from None
    except OSError as exc:
        raise SecretError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    if len(raw) > MAX_SECRET_FILE_BYTES:
        raise SecretError(f"{path} is larger than {MAX_SECRET_FILE_BYTES} bytes: not a secret file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SecretError(f"{path} is not UTF-8 text (byte {exc.start})") from None


def _unescape(s: str) -> str:
    """A properties value's escapes: ``\\t \\n \\r \\f \\uXXXX``, any other ``\\c`` is ``c``."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[i + 2:i + 6] or ""):
                out.append(chr(int(s[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def read_properties(text: str) -> dict[str, str]:
    """A Java properties file (``java.util.Properties.load``): ``#``/``!`` comments, ``key=value``,
    ``key: value`` or ``key value``, a trailing backslash continues the line, backslash escapes."""
    logical, buf = [], ""
    for line in text.splitlines():
        line = line.lstrip(" \t\f")  # leading whitespace, of a continuation line too
        if not buf and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes: the line goes on
            buf += line[:-1]
            continue
        logical.append(buf + line)
        buf = ""
    if buf:
        logical.append(buf)
    props = {}
    for line in logical:
        m = re.match(r"((?:\\.|[^\\=:\s])*)\s*[=:\s]?\s*(.*)", line, re.S)
        props[_unescape(m.group(1))] = _unescape(m.group(2))
    return props


def resolve_one(ref: re.Match, environ) -> str:
    """The value of one reference (a ``REFERENCE`` match), or SecretError naming it."""
    shown = ref.group(0)
    try:
        return _value(ref, environ)
    except SecretError as exc:
        msg = str(exc)
        raise SecretError(msg if msg.startswith(shown) else f"{shown}: {msg}") from None


def _value(ref: re.Match, environ) -> str:
    provider, path, key = ref.group(1), ref.group(3), ref.group(4)
    shown = ref.group(0)
    if provider == "env":
        if key not in environ:
            raise SecretError(f"{shown}: environment variable {key} is not set")
        return environ[key]
    if provider == "directory":
        if not path:
            raise SecretError(f"{shown}: expected ${{directory:DIR:NAME}} (the folder, then the file in it)")
        if "/" in key or key in ("", ".", ".."):
            raise SecretError(f"{shown}: NAME must be a file name in DIR, not a path")
        text = _read_file(os.path.join(path, key))
        return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
    if provider == "file":
        if not path:
            raise SecretError(f"{shown}: expected ${{file:PATH:KEY}} (a properties file, then the key in it)")
        props = read_properties(_read_file(path))
        if key not in props:
            raise SecretError(f"{shown}: no key {key} in {path}")
        return props[key]
    raise SecretError(f"{shown}: unknown provider {provider!r} (known: {', '.join(PROVIDERS)})")


def resolve_string(value: str, environ=None) -> str:
    environ = os.environ if environ is None else environ
    return REFERENCE.sub(lambda m: resolve_one(m, environ), value)


def resolve(data, environ=None, deferred=()):
    """``data`` (parsed YAML) with every reference in its string values resolved, and the problems:
    ``(key path, reason)``, one per value that could not be resolved (its first bad reference). Values
    under a key in ``deferred`` are resolved to check them, and kept as written."""
    environ = os.environ if environ is None else environ
    found: list[tuple[str, str]] = []

    def walk(node, where, key=None):
        if isinstance(node, dict):
            return {k: walk(v, f"{where}.{k}" if where else str(k), k) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, f"{where}[{i}]") for i, v in enumerate(node)]
        if has_reference(node):
            try:
                value = resolve_string(node, environ)
            except SecretError as exc:
                found.append((where or "(top level)", str(exc)))
                return node
            return node if key in deferred else value
        return node

    return walk(data, ""), found
