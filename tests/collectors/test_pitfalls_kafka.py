"""Issue 16 in the collector, on the real broker: producer pitfalls counted on disk by the log-dir
reader (empty-string values, records without a key)."""

from __future__ import annotations

import pytest

from collecting import make_collector, pval, refresh
from collectors import metrics as M
from kafkatools import create_topic, produce, set_topic_config, unique_topic

pytestmark = pytest.mark.kafka


def test_empty_values_and_keyless_records_on_disk_are_exported(kafka):
    t = create_topic(kafka.bootstrap, unique_topic("pitfall-collect"), **{"cleanup.policy": "delete"})
    produce(kafka.bootstrap, t, [(None, b"old, keyless")] * 4)  # before the topic became compacted
    set_topic_config(kafka.bootstrap, t, **{"cleanup.policy": "compact"})
    produce(kafka.bootstrap, t, [(f"k{i}".encode(), b"x") for i in range(10)])
    produce(kafka.bootstrap, t, [(b"k1", b""), (b"k2", b""), (b"k3", None), (b"k4", b"")])
    reg = refresh(make_collector(kafka))
    assert pval(reg, M.P_EMPTY_VALUES, t) == 3
    assert pval(reg, M.P_KEYLESS, t) == 4
