"""A broker's JMX exporter page as a source, and the credentials of its (and Jolokia's) endpoint.

One definition for the page of a configured ``jmx_url`` and for one filled from ``jmx_url_template``
(``collectors.jmx.template``), so a broker found at run time is read exactly as a listed one.
"""

from __future__ import annotations

from boundedhttp import FetchError, get_text

from collectors.jmx.gauges import IoSampler, parse_exposition
from collectors.serving.runner import Source
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from monitor.contract.sourcekinds import JMX


def jmx_source(config: Config, cluster: ClusterConfig, b: BrokerConfig, label: str, url: str) -> Source:
    """The JMX exporter page of broker ``label`` at ``url`` (a configured ``jmx_url``, or one filled from
    ``jmx_url_template``: ``collectors.jmx.template``), with ``b``'s credentials and CA."""
    to = config.timeouts

    def jmx(sampled=IoSampler()):
        return sampled(parse_exposition(get_text(url, deadline=to.jmx, max_bytes=to.max_page_bytes,
                                                 auth=jmx_credentials(b, url), ca_file=b.jmx_ca_file), cluster, url))

    return Source(f"jmx:{cluster.name}:{label}", JMX, cluster.name, jmx, config.intervals.jmx, label, endpoint=url)


def jmx_credentials(broker: BrokerConfig, endpoint: str) -> tuple[str, str] | None:
    """(user, password) for the broker's JMX exporter / Jolokia endpoint; None without ``jmx_username``.
    ``jmx_password`` is a secret reference (``monitor.settings.secrets``) resolved now, at every fetch, so a rotated
    secret file is picked up at the next one. A password that cannot be had puts the source down
    (``source_errors_total{error="credentials"}``) naming the reference, never a value."""
    from monitor.settings.secrets import SecretError, resolve_string

    if not broker.jmx_username:
        if broker.jmx_password:
            raise FetchError(endpoint, "credentials", "jmx_password given without jmx_username")
        return None
    if not broker.jmx_password:
        raise FetchError(endpoint, "credentials", "jmx_username needs jmx_password (${env:NAME}, "
                                                  "${directory:DIR:NAME} or ${file:PATH:KEY})")
    try:
        return broker.jmx_username, resolve_string(broker.jmx_password)
    except SecretError as exc:
        raise FetchError(endpoint, "credentials", f"jmx_password: {exc}") from None
