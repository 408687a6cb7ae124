"""Kafka Streams' internal topic names (ProcessorStateManager.storeChangelogTopic: <app>-<store>-changelog,
or <app>-<named topology>-<store>-changelog; InternalTopologyBuilder.decorateTopic with KStreamImpl's
-repartition suffix), and the audit's topic rows labelled with them."""

import pytest

from monitor.model.streams import streams_role, streams_topic
from spark_analysis.audit.tables import PROJECTED_SUMS, TOPIC_SUMS, topic_rows


@pytest.mark.parametrize("topic, role, stem", [
    ("wordcount-app-counts-store-changelog", "changelog", "wordcount-app-counts-store"),
    ("app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog", "changelog",
     "app-KSTREAM-AGGREGATE-STATE-STORE-0000000003"),
    ("app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition", "repartition",
     "app-KSTREAM-AGGREGATE-STATE-STORE-0000000003"),
    ("orders", None, None),
    ("-changelog", None, None),
    ("changelog", None, None),
    ("orders-changelog-0", None, None),
])
def test_roles_by_name(topic, role, stem):
    s = streams_topic(topic)
    assert (s.role if s else None, s.stem if s else None) == (role, stem)
    assert streams_role(topic) == (role or "")


def test_known_application_ids_split_the_stem():
    s = streams_topic("wordcount-app-counts-store-changelog", ["wordcount", "wordcount-app", "other"])
    assert (s.application_id, s.name) == ("wordcount-app", "counts-store")  # the longest that prefixes it
    s = streams_topic("wordcount-app-counts-store-changelog", ["other"])
    assert (s.application_id, s.name) == (None, None)


def test_audit_topic_rows_carry_the_role():
    row = {k: 1 for k in TOPIC_SUMS + PROJECTED_SUMS} | {"cleanable_ratio": None, "next_removable_ms": None,
                                                          "projection_method": "counted"}
    rows = [row | {"topic": "app-store-changelog"}, row | {"topic": "app-x-repartition"}, row | {"topic": "orders"}]
    assert {t["topic"]: t["streams_role"] for t in topic_rows(rows)} == {
        "app-store-changelog": "changelog", "app-x-repartition": "repartition", "orders": ""}
