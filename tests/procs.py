"""Helper processes for tests: the demo's own helpers (free loopback ports, start and always stop), and
a query of a running Prometheus."""

import json
import urllib.parse
import urllib.request

from cli.demo import free_port, process, wait_http  # noqa: F401


def prometheus_query(url: str, q: str) -> list[dict]:
    """The result vector of the instant query ``q`` on the Prometheus at ``url``."""
    with urllib.request.urlopen(f"{url}/api/v1/query?query={urllib.parse.quote(q)}", timeout=5) as r:
        return json.load(r)["data"]["result"]
