"""A free loopback port for a process we start (a broker, a Spark master, a helper server), drawn below the
kernel's ephemeral range. A shared library of ours (standard library only): the local broker, the standalone
Spark cluster, the demo, the benches and the tests all need it, and edges may not import each other."""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 10000  # below: well-known and registered services' ports
_HANDED_OUT: set[int] = set()
_DRAW = random.SystemRandom()  # not the random module's: tests seed that (TEST_SEED), alike on each worker


def _ephemeral_start() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default range starts here


def free_port(host: str = "127.0.0.1") -> int:
    """A port free now, drawn below the kernel's ephemeral range, never the same twice in a process. Not
    one the kernel hands out (bind to port 0): that range is also where outgoing connections take their
    source ports, so a client's connection could take it before the broker binds it (seen on two xdist
    workers: "Socket server failed to bind ... Address already in use"). Below the range nothing takes a
    port but a listener, and a random draw checked by a bind keeps two runs apart."""
    top = _ephemeral_start()
    for _ in range(200 if top - LOWEST_PORT >= 1000 else 0):
        port = _DRAW.randrange(LOWEST_PORT, top)
        if port in _HANDED_OUT:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # no room below the range: the kernel's
        s.bind((host, 0))
        return s.getsockname()[1]
