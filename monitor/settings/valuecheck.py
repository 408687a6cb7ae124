"""One check for each kind of value a user gives: a port, an http(s) URL, bootstrap servers, seconds.

A value reaches the monitor as a command-line flag (``collect --port``, ``--jmx-url``) or as a key of
``monitor.yaml`` (``listen.port``, ``brokers[].jmx_url``). Both run the same function here, so the
same bad value gets the same reason wherever it is given, before any work starts: a port of 70000
would otherwise fail deep in ``bind()`` (``OverflowError``), a URL with an unclosed ``[`` in
``urlparse`` (``ValueError: Invalid IPv6 URL``), both as tracebacks.

Each ``*_problem`` returns None for a good value, else the reason, ``expected <shape>, got <value>
(<why>)``: the command line prints it after the flag, the config check after the key path. The value
is shown as ``shown`` gives it: a URL's password never (``redact_url``), a long value as a short
escaped excerpt (``monitor.fileio.excerpt``). A URL may carry a ``${env:...}``-style secret reference
(``monitor.settings.secrets``) in its user part; references are checked as written, never resolved here.
"""

from __future__ import annotations

import ipaddress
import math
import re
from urllib.parse import urlsplit

from monitor.fileio.excerpt import excerpt

PORT_SHAPE = "a port from 0 to 65535 (0: any)"
URL_SHAPE = "an http:// or https:// URL"
BOOTSTRAP_SHAPE = "host:port[,host:port...] with ports from 1 to 65535"
ADDRESS_SHAPE = "an IP address or a host name"
MAX_PORT = 65535
SHOWN_CHARS = 80  # a value in a message (a URL is often longer than a file excerpt)


def shown(value) -> str:
    """A value as a message shows it: a string as a short escaped excerpt with any URL password
    replaced by ``***``; containers by kind; anything else as ``repr``."""
    from monitor.settings.redact import redact_url

    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return f"a list ({len(value)} item{'' if len(value) == 1 else 's'})"
    if value is None:
        return "nothing"
    if isinstance(value, str):  # a flag or a key's value: at most ARG_MAX or the config's 1 MiB
        return excerpt(redact_url(value), SHOWN_CHARS)
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else excerpt(text, SHOWN_CHARS)


def _expected(shape: str, value, why: str | None = None) -> str:
    return f"expected {shape}, got {shown(value)}" + (f" ({why})" if why else "")


def _shown_url(value: str) -> str:
    """A URL for a message: its whole user part as ``***`` (a bad URL's password may hold what
    ``redact_url`` would not take for one: a space, a slash)."""
    from monitor.settings.redact import redact_url
    from monitor.settings.secrets import REFERENCE

    plain = REFERENCE.sub("ref", value)
    if redact_url(plain) != plain:
        return value  # a user part redact_url finds: shown as user:***@ (or its ${...} reference) by ``shown``
    scheme, sep, rest = value.partition("://")
    if sep and "@" in rest:
        return f"{scheme}://***@{rest.rpartition('@')[2]}"
    return value


def port_problem(value) -> str | None:
    """A listening port: a whole number from 0 (any free one) to 65535. ``value`` may be text (a flag)."""
    port = _whole(value)
    if port is None:
        return _expected(PORT_SHAPE, value, "not a whole number")
    if not 0 <= port <= MAX_PORT:
        return _expected(PORT_SHAPE, value, "out of range")
    return None


def _whole(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and value.strip().isascii():
        return int(value.strip())
    return None


def _host_problem(host: str, what: str) -> str | None:
    """Why ``host`` (as a URL or a host:port writes it; an IPv6 address in brackets) is no host."""
    if host.startswith("["):
        if not host.endswith("]"):
            return f"the IPv6 address of the {what} has no closing ]"
        try:
            ipaddress.IPv6Address(host[1:-1].split("%", 1)[0])
        except ValueError:
            return f"{host} is no IPv6 address"
        return None
    if not host:
        return f"no host in the {what}"
    if any(c in host for c in "[]") or any(c.isspace() or not c.isprintable() for c in host):
        return f"the host of the {what} has a character a host name cannot have"
    return _name_problem(host, what)


MAX_NAME, MAX_LABEL = 253, 63  # RFC 1035 2.3.4: a name's and a label's length


def _name_problem(host: str, what: str) -> str | None:
    """Why ``host`` is neither an IPv4 address nor a host name (RFC 1123 labels: letters, digits, ``-``
    inside, ``_`` as Docker's and Compose's service names have it), said before any lookup: a resolver
    would answer "Name or service not known" for ``kafka..1`` or ``999.1.1.1`` only after the command
    started, and ``h..x`` fails deep in the IDNA codec."""
    name = host[:-1] if host.endswith(".") else host  # a fully qualified name's root dot
    if name and all(c.isdigit() or c == "." for c in name):
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            return f"{host} is no IPv4 address"
        return None
    if len(name) > MAX_NAME:
        return f"the host of the {what} is longer than {MAX_NAME} characters"
    for label in name.split("."):
        if not label:
            return f"the host of the {what} has an empty label (two dots, or a dot in front)"
        if len(label) > MAX_LABEL:
            return f"a label of the host of the {what} is longer than {MAX_LABEL} characters"
        if label[0] == "-" or label[-1] == "-":
            return f"a label of the host of the {what} begins or ends with -"
        if not all(c.isalnum() or c in "-_" for c in label):
            return f"the host of the {what} has a character a host name cannot have"
    return None


def address_problem(value) -> str | None:
    """A listen address: an IP address (IPv6 with or without brackets) or a host name. Empty is refused:
    Python's socket would listen on every interface, and an empty value is most often an unset shell or
    Helm variable, not a decision to expose the page everywhere; that decision is spelled ``0.0.0.0``
    (or ``::``)."""
    if not isinstance(value, str):
        return _expected(ADDRESS_SHAPE, value)
    text = value.strip()
    if not text:
        return _expected(ADDRESS_SHAPE, value, "empty: say 0.0.0.0 or :: to listen on every interface")
    try:
        ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
        return None
    except ValueError:
        pass
    why = _host_problem(text, "address")
    return None if why is None else _expected(ADDRESS_SHAPE, value, why)


def _port_part(text: str, what: str, allow_zero: bool) -> str | None:
    low = 0 if allow_zero else 1
    if not text.isascii() or not text.isdigit():
        return f"the port of the {what} is not a number"
    if not low <= int(text) <= MAX_PORT:
        return f"port {int(text)} of the {what} is out of range {low}-{MAX_PORT}"
    return None


def _split_host_port(hostport: str) -> tuple[str, str | None]:
    """``[::1]:80`` -> ``("[::1]", "80")``; ``h:80`` -> ``("h", "80")``; ``h`` -> ``("h", None)``."""
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return hostport, None
        rest = hostport[end + 1:]
        return hostport[: end + 1], (rest[1:] if rest.startswith(":") else (rest or None))
    host, colon, port = hostport.rpartition(":")
    return (host, port) if colon else (hostport, None)


def url_problem(value) -> str | None:
    """An http:// or https:// URL a collector fetches: a scheme, a host (an IPv6 address in
    brackets), a port from 1 to 65535 when given. A ``${provider:...}`` reference (a password) is
    checked as the placeholder it stands for."""
    from monitor.settings.secrets import REFERENCE

    if not isinstance(value, str):
        return _expected(URL_SHAPE, value)
    text = REFERENCE.sub("ref", value)
    value = _shown_url(value)
    if any(c.isspace() or not c.isprintable() for c in text):
        return _expected(URL_SHAPE, value, "it has a space or a control character")
    try:
        parts = urlsplit(text)
    except ValueError:  # urlsplit's "Invalid IPv6 URL": an unmatched bracket
        parts = None
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme not in ("http", "https"):
        return _expected(URL_SHAPE, value, "no http:// or https:// in front")
    netloc = parts.netloc if parts is not None else text.split("://", 1)[1].split("/", 1)[0]
    hostport = netloc.rpartition("@")[2]
    host, port = _split_host_port(hostport)
    why = _host_problem(host, "URL")
    if why is None and port is not None:
        why = _port_part(port, "URL", allow_zero=False)
    if why is None and parts is None:
        why = "an unmatched [ or ]"
    if why is None and re.search(r"%(?![0-9A-Fa-f]{2})", text):
        why = "a % not followed by two hex digits (a literal % is written %25)"
    return None if why is None else _expected(URL_SHAPE, value, why)


def resolved_url_problem(written: str, resolved: str) -> str | None:
    """A URL checked as written (its ``${...}`` references as placeholders) that is no URL once they are
    resolved: a secret with ``/``, ``@``, ``[`` or ``:`` in it breaks the user part. Said without any
    part of the resolved value (a misparsed URL's "port" or "host" would be a piece of the secret)."""
    from monitor.settings.secrets import has_reference

    if not has_reference(written) or url_problem(resolved) is None:
        return None
    return (f"expected {URL_SHAPE}, got {shown(_shown_url(written))} (with its reference resolved it is no URL: "
            "percent-encode the secret's / @ [ ] : ? # characters)")


def bootstrap_problem(value) -> str | None:
    """Kafka bootstrap servers: ``host:port`` items, comma-separated (or a list of them); a port is
    optional (librdkafka's default 9092) but, when given, from 1 to 65535."""
    items = value if isinstance(value, list) else str(value).split(",")
    for item in items:
        if not isinstance(item, str):  # a list's number: the schema's "expected a host:port string" says it
            continue
        item = item.strip()
        if not item:
            return _expected(BOOTSTRAP_SHAPE, value, "an empty entry")
        hostport = item.split("://", 1)[1] if "://" in item else item  # librdkafka takes PLAINTEXT://h:p too
        host, port = _split_host_port(hostport)
        why = _host_problem(host, f"entry {shown(item)}")
        if why is None and port is not None:
            why = _port_part(port, f"entry {shown(item)}", allow_zero=False)
        if why:
            return _expected(BOOTSTRAP_SHAPE, value, why)
    return None


def number_problem(value, shape: str, *, minimum: float | None = None, above: float | None = None,
                   maximum: float | None = None, whole: bool = False) -> str | None:
    """A finite number (``whole``: a whole one) in the range given, as text (a flag) or a number."""
    try:
        n = int(value) if whole else float(value)
    except (TypeError, ValueError, OverflowError):
        return _expected(shape, value, "not a whole number" if whole else "not a number")
    if isinstance(n, float) and not math.isfinite(n):
        return _expected(shape, value, "not finite")
    if (minimum is not None and n < minimum) or (above is not None and n <= above) or \
            (maximum is not None and n > maximum):
        return _expected(shape, value, "out of range")
    return None


def path_text_problem(value) -> str | None:
    """A file or folder path given on the command line: not empty (``--log-dir "$UNSET"`` would read the
    current folder, ``--cleaner-log ""`` nothing at all, without a word)."""
    if isinstance(value, str) and not value.strip():
        return _expected("a path", value, "empty: an unset variable?")
    return None


def flag_type(problem, convert):
    """An argparse ``type=`` for a flag checked by ``problem``: a bad value is argparse's usage error
    ``argument --flag: <problem>`` (one line, exit 2), a good one ``convert``ed. (argparse is the
    standard library's; the command line and the audit's own parser both use it.)"""
    import argparse

    def parse(text: str):
        why = problem(text)
        if why:
            raise argparse.ArgumentTypeError(why)
        return convert(text)

    parse.__name__ = getattr(convert, "__name__", "value")
    parse.problem = problem  # which check it runs (tests/cli/test_conventions gives each kind a bad value)
    return parse


def number_type(shape: str, *, whole: bool = False, **bounds):
    """``flag_type`` of a finite number (``whole``: an int) within ``bounds`` (minimum, above, maximum)."""
    parse = flag_type(lambda t: number_problem(t, shape, whole=whole, **bounds), int if whole else float)
    parse.problem = number_problem
    return parse
