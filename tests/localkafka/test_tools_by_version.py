"""Kafka's tools are run as the version of the broker they check (localkafka.kafkatools.tool_class): the
classes moved from core to the tools module release by release (found in each version's jars: 3.9.1's
kafka_2.13 holds kafka.tools.DumpLogSegments and kafka.admin.ConfigCommand; 4.3.0's kafka-tools holds
org.apache.kafka.tools.DumpLogSegments, its core still kafka.admin.ConfigCommand; 4.4.0's kafka-tools holds
org.apache.kafka.tools.ConfigCommand and core no longer has it). And which family a version's broker is."""

import pytest

from localkafka.jars import KRAFT, ZOOKEEPER, BrokerError, family
from localkafka.kafkatools import tool_class


@pytest.mark.parametrize("version, dump, configs", [
    ("3.9.1", "kafka.tools.DumpLogSegments", "kafka.admin.ConfigCommand"),
    ("4.3.0", "org.apache.kafka.tools.DumpLogSegments", "kafka.admin.ConfigCommand"),
    ("4.4.0", "org.apache.kafka.tools.DumpLogSegments", "org.apache.kafka.tools.ConfigCommand"),
])
def test_each_version_runs_its_own_tools_classes(version, dump, configs):
    assert tool_class("kafka-dump-log", version) == dump
    assert tool_class("kafka-configs", version) == configs
    assert tool_class("kafka-transactions", version) == "org.apache.kafka.tools.TransactionsCommand"


def test_a_version_is_of_the_zookeeper_or_the_kraft_family_or_named_as_unknown():
    assert [family(v) for v in ("3.9.1", "3.0.0", "4.0.0", "4.4.0")] == [ZOOKEEPER, ZOOKEEPER, KRAFT, KRAFT]
    for bad in ("2.8.2", "4.4", "latest"):
        with pytest.raises(BrokerError, match=rf"Kafka version '{bad}': expected MAJOR.MINOR.PATCH of Kafka 3.0.0"):
            family(bad)
    with pytest.raises(BrokerError, match="kafka-dump-log: no main class known for Kafka 2.8.2"):
        tool_class("kafka-dump-log", "2.8.2")


def test_the_launcher_names_no_moved_tool_class_but_through_tool_class():
    """localkafka's cluster and security setup run kafka-storage and kafka-configs too: a class written out
    there (``kafka.admin.ConfigCommand``) broke the 3-broker cluster on 4.4, where it moved; only
    kafkatools' table names them."""
    from pathlib import Path

    from localkafka.kafkatools import TOOL_CLASSES

    classes = {cls for versions in TOOL_CLASSES.values() for _, cls in versions}
    here = Path(__file__).resolve().parents[2] / "localkafka"
    said = [f"{p.name}: {cls}" for p in sorted(here.glob("*.py")) if p.name != "kafkatools.py"
            for cls in classes if f'"{cls}"' in p.read_text()]
    assert not said, said
