"""Strict JSON everywhere: ``monitor.fileio.strictjson`` refuses NaN and Infinity, every JSON the product writes
goes through it, and the audit's cleaner throttle (Kafka's default is Double.MAX_VALUE, the model's
infinity) is written as null with its reason. (A real audit's summary.json read by a strict parser:
tests/dashboards/test_audit_accuracy.py.)"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import monitor
from monitor.fileio import strictjson
from monitor.model.estimate import UNTHROTTLED, CleanerParams

ROOT = Path(monitor.__file__).resolve().parent.parent  # the checkout, wherever this test file sits
PRODUCT = ("monitor", "collectors", "spark_analysis", "dashboards", "alerts", "localkafka", "cli", "boundedhttp",
           "bench")
ALLOWED = {Path("monitor/fileio/strictjson.py")}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_float_fails_loudly(value):
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        strictjson.dumps({"ratio": [1.0, value]})


def test_finite_values_are_written_as_json_writes_them():
    data = {"a": 1.5, "b": None, "c": [1, "x", True], "d": 1.7976931348623157e308}
    assert strictjson.dumps(data, indent=2) == json.dumps(data, indent=2)


def strict_loads(text: str):
    """A parser that refuses NaN and Infinity, as jq, Go and JSON.parse do."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("io_max", [math.inf, 1.7976931348623157e308, 0.0])
def test_an_unlimited_throttle_is_null_with_its_reason(io_max):
    from spark_analysis.audit.tables import throttle_fields

    got = throttle_fields(CleanerParams(io_max_bytes_per_second=io_max))
    assert got == {"io_max_bytes_per_second": None, "io_max_bytes_per_second_reason": UNTHROTTLED}
    assert strict_loads(strictjson.dumps(got)) == got


def test_a_throttle_is_its_value():
    from spark_analysis.audit.tables import throttle_fields

    got = throttle_fields(CleanerParams(io_max_bytes_per_second=1048576.0))
    assert got == {"io_max_bytes_per_second": 1048576.0, "io_max_bytes_per_second_reason": None}


def test_no_json_is_written_but_through_strictjson():
    found = []
    for pkg in PRODUCT:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT)
            if rel in ALLOWED:
                continue
            for n, line in enumerate(f.read_text().splitlines(), 1):
                if re.search(r"\bjson\.dumps?\(", line):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []
