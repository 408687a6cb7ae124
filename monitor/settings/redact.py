"""Secrets kept out of what the monitor prints: ``config check``'s output and config error messages.

A secret is a value under a key that names one (librdkafka's ``sasl.password``, ``ssl.key.password``,
``ssl.keystore.password``, ``sasl.oauthbearer.client.secret``, ``ssl.key.pem``, Java's
``sasl.jaas.config``, anything with password, secret, token or credential in its name), and the
password of a URL's user part (``https://user:pass@host`` -> ``https://user:***@host``).
"""

from __future__ import annotations

import re

REDACTED = "***"
SECRET_WORDS = ("password", "secret", "token", "credential", "jaas", "private")
SECRET_KEYS = frozenset({"ssl.key.pem", "sasl.oauthbearer.config", "ssl_key", "ssl.keystore.key"})
# the user part ends at the authority's last "@" (the one followed by a host and then "/", "?", "#", a
# space or the end), so a password holding "/" or "@" (a secret not percent-encoded) is redacted whole
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^:@/\s]*)(?::(?P<pw>\S*?))?"
                       r"@(?=[^@\s/?#]*(?:[/?#\s]|$))")


def is_secret_key(key) -> bool:
    k = str(key).lower()
    return k in SECRET_KEYS or any(w in k for w in SECRET_WORDS)


def redact_url(text: str) -> str:
    """Every URL's user part in ``text`` without its password (a user alone may be a token too: kept
    as ``***``)."""
    from monitor.settings.secrets import REFERENCE

    def repl(m):
        if m.group("pw") is not None and REFERENCE.fullmatch(m.group("pw")):
            return m.group(0)  # a ${provider:...} reference says where the secret is, never what it is
        if m.group("pw") is not None:
            return f"{m.group('scheme')}{m.group('user')}:{REDACTED}@"
        return f"{m.group('scheme')}{REDACTED}@"
    return _USERINFO.sub(repl, text)


def redacted(value, key=None):
    """A copy of plain data (mappings, lists, scalars) with every secret replaced by ``***``."""
    if key is not None and is_secret_key(key) and not isinstance(value, (dict, list, tuple)) and value is not None:
        return REDACTED  # a scalar under a secret's name (a mapping under one, a topic say, is walked)
    if isinstance(value, dict):
        return {k: redacted(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(v) for v in value]
    if isinstance(value, str):
        return redact_url(value)
    return value


def with_references(shown, written):
    """``shown`` (a config's redacted mapping) with every value that ``written`` (the file as written)
    gives by a ``${provider:...}`` reference (``monitor.settings.secrets``) shown as written: where a secret
    comes from, never its value (``sasl.password: ${env:KAFKA_PASSWORD}``)."""
    from monitor.settings.secrets import has_reference

    if isinstance(written, dict) and isinstance(shown, dict):
        return {k: with_references(v, written[k]) if k in written else v for k, v in shown.items()}
    if isinstance(written, list) and isinstance(shown, list) and len(written) == len(shown):
        return [with_references(s, w) for s, w in zip(shown, written)]
    if has_reference(written):
        return redact_url(written)
    return shown


def literal_secrets(written, where: str = "") -> list[str]:
    """Key paths of ``written`` (a config as written) whose secret is in the file itself: a scalar under
    a secret's name, or a URL with a password, not given by reference (``monitor.settings.secrets``)."""
    from monitor.settings.secrets import REFERENCE, has_reference

    found = []
    if isinstance(written, dict):
        for k, v in written.items():
            path = f"{where}.{k}" if where else str(k)
            if is_secret_key(k) and isinstance(v, (str, int, float)) and not isinstance(v, bool) \
                    and not has_reference(v) and str(v) != "":
                found.append(path)
            else:
                found += literal_secrets(v, path)
    elif isinstance(written, list):
        for i, v in enumerate(written):
            found += literal_secrets(v, f"{where}[{i}]")
    elif isinstance(written, str):
        for m in _USERINFO.finditer(written):
            if m.group("pw") and not REFERENCE.fullmatch(m.group("pw")):
                found.append(where)
    return found
