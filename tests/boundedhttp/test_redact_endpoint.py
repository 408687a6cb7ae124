"""A FetchError never carries a URL's password, whoever raises it (boundedhttp itself, or a parser
handed the configured URL as its endpoint)."""

from boundedhttp import FetchError
from collectors.jmx.gauges import parse_exposition
from monitor.settings.config import ClusterConfig

import pytest


def test_a_parser_error_names_the_endpoint_without_its_password():
    with pytest.raises(FetchError) as e:
        parse_exposition("# nothing of the cleaner\n", ClusterConfig(), "http://admin:Pw-9xq@h:7071/metrics")
    assert "Pw-9xq" not in str(e.value) and "http://admin:***@h:7071/metrics" in str(e.value)
    assert e.value.endpoint == "http://admin:***@h:7071/metrics"
