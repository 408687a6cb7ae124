"""Helper processes for tests: the demo's own helpers (free loopback ports, start and always stop)."""

from cli.demo import free_port, process, wait_http  # noqa: F401
