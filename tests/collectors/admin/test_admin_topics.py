"""The topics refresh (collectors.admin.topics): a topic whose describe_configs or list_offsets got no
answer is unknown in the snapshot with the call and the reason (exported as topic_admin_unknown), the
others' configs and offsets are there, and the clients are rebuilt for the next refresh. A fake admin
client (tests/adminfakes.py): which topic a real broker fails on is not ours to pick."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from prometheus_client import CollectorRegistry

from adminfakes import TIMED_OUT, done, fetcher
from collectors.export.exporter import register_all
from collectors.serving.runner import Store


@pytest.mark.parametrize("fail", ["describe_configs", "list_offsets"])
def test_a_topic_the_admin_api_did_not_answer_for_is_unknown_with_the_call(fail):
    class Admin:
        def list_topics(self, **_):
            part = SimpleNamespace(leader=1, replicas=[1], isrs=[1])
            topics = {t: SimpleNamespace(error=None, partitions={0: part}) for t in ("a", "b")}
            return SimpleNamespace(topics=topics, brokers={})

        def describe_configs(self, resources, **_):
            entry = SimpleNamespace(value="compact")
            return {r: done(exc=TIMED_OUT) if fail == "describe_configs" and r.name == "b"
                    else done({"cleanup.policy": entry}) for r in resources}

        def list_offsets(self, request, **_):
            return {tp: done(exc=TIMED_OUT) if fail == "list_offsets" and tp.topic == "b"
                    else done(SimpleNamespace(offset=5)) for tp in request}

        def poll(self, _):
            return 0

    f = fetcher(Admin())
    try:
        snap = f.topics()
        assert snap.unknown == {"b": (fail, "timeout")}
        assert "a" in snap.topics and snap.topics["a"].partitions[0].latest == 5
        if fail == "list_offsets":
            assert snap.topics["b"].partitions[0].latest == -1
        store = Store()
        store.register("admin:c", "admin", "c")
        store.success("admin:c", snap, 0.1, 0.0)
        reg = CollectorRegistry(auto_describe=False)
        register_all(reg, store)
        assert reg.get_sample_value("kafka_compaction_topic_admin_unknown",
                                    {"cluster": "c", "topic": "b", "call": fail, "reason": "timeout"}) == 1
        assert f.rebuilds == 1
    finally:
        f.close()


def test_a_compacted_topics_config_offsets_and_the_brokers_settings_are_the_brokers(kafka):
    """Against the session broker: the compacted topic's configs as the broker describes them, each
    partition's earliest, log end and last stable offsets as a consumer sees them, its leader and replicas,
    and the broker's transaction.max.timeout.ms and log cleaner settings as its describe_configs gives them;
    a topic that is not compacted is listed apart, with its config."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    from collectors.admin.source import AdminFetcher
    from kafkatools import compacted, create_topic, produce, unique_topic, watermarks
    from monitor.settings.config import ClusterConfig
    from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT

    topic = create_topic(kafka.bootstrap, unique_topic("admin-topics"), 2,
                         **compacted(**{"min.cleanable.dirty.ratio": 0.3, "segment.ms": 3_600_000}))
    plain = create_topic(kafka.bootstrap, unique_topic("admin-plain"), **{"cleanup.policy": "delete"})
    produce(kafka.bootstrap, topic, [(f"k{i}", "v") for i in range(7)], partition=1)
    f = AdminFetcher(ClusterConfig(name="c", bootstrap_servers=kafka.bootstrap), timeout=10)
    try:
        snap = f.topics()
    finally:
        f.close()
    assert snap.unknown == {} and {topic, plain} <= snap.listed
    info = snap.topics[topic]
    assert info.config.compacted and info.config.min_cleanable_dirty_ratio == 0.3
    assert plain not in snap.topics and not snap.not_compacted[plain].compacted
    for p in (0, 1):
        po = info.partitions[p]
        low, high = watermarks(kafka.bootstrap, topic, p)
        assert (po.earliest, po.latest, po.stable) == (low, high, high)  # no transaction: the LSO is the end
        assert po.replicas == (po.leader,) and po.isr == (po.leader,)
    assert info.partitions[1].latest == 7
    assert snap.out_of_sync == {}  # one broker, in sync
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    res = ConfigResource(ResourceType.BROKER, str(info.partitions[0].leader))
    broker = {k: e.value for k, e in admin.describe_configs([res])[res].result(30).items()}
    assert snap.transaction_max_timeout_ms == int(broker[TRANSACTION_MAX_TIMEOUT])
    threads = snap.cleaner_setting(str(info.partitions[0].leader), "log.cleaner.threads")
    assert (threads.value, threads.source) == (int(broker["log.cleaner.threads"]), "admin")
    assert snap.producer_id_expiration_ms == {info.partitions[0].leader: int(broker["producer.id.expiration.ms"])}


def test_a_replica_out_of_the_isr_is_tracked_across_refreshes_and_offline_when_its_broker_is_gone():
    """The metadata's ISR and live brokers, refresh after refresh (collectors.admin.replicas): out at the
    first look is a lower bound; out after a refresh that saw it in is not; the broker describes its
    producer.id.expiration.ms, or it is left out (unknown, not Kafka's default)."""
    state = {"isr": [1, 2], "brokers": {1: None, 2: None}}

    class Admin:
        def list_topics(self, **_):
            part = SimpleNamespace(leader=1, replicas=[1, 2], isrs=list(state["isr"]))
            return SimpleNamespace(topics={"a": SimpleNamespace(error=None, partitions={0: part})},
                                   brokers=dict(state["brokers"]))

        def describe_configs(self, resources, **_):
            entry = SimpleNamespace
            return {r: done({"cleanup.policy": entry(value="compact")}) if r.name == "a"
                    else done({"producer.id.expiration.ms": entry(value="3600000")}) if r.name == "1"
                    else done({}) for r in resources}  # broker 2 does not list it

        def list_offsets(self, request, **_):
            return {tp: done(SimpleNamespace(offset=5)) for tp in request}

        def poll(self, _):
            return 0

    now = [100.0]
    f = fetcher(Admin())
    f._topics.clock = lambda: now[0]
    try:
        assert f.topics().out_of_sync == {}
        state.update(isr=[1], brokers={1: None})
        now[0] = 110.0
        snap = f.topics()
        assert [(k, v.since, v.lower_bound, v.offline) for k, v in snap.out_of_sync.items()] == [
            (("a", 0, 2), 110.0, False, True)]
        assert snap.producer_id_expiration_ms == {1: 3_600_000}  # broker 2 gone; unlisted: unknown, not a default
        state.update(brokers={1: None, 2: None})
        now[0] = 130.0
        assert f.topics().out_of_sync[("a", 0, 2)].since == 110.0  # still out: since the first refresh that saw it
    finally:
        f.close()


def test_a_failed_list_offsets_is_one_error_per_broker_naming_it_and_its_partitions_count():
    """Issue 42: broker 2 does not answer for the four partitions it leads, broker 1 answers for its own:
    one error per call and broker (its id, address and how many partitions), one error kind each, not
    one per partition; the partitions broker 1 leads keep their offsets."""
    leaders = {0: 1, 1: 2, 2: 2, 3: 2, 4: 2}

    class Admin:
        def list_topics(self, **_):
            parts = {p: SimpleNamespace(leader=b, replicas=[b], isrs=[b]) for p, b in leaders.items()}
            brokers = {b: SimpleNamespace(host="127.0.0.1", port=9090 + b) for b in (1, 2)}
            return SimpleNamespace(topics={"a": SimpleNamespace(error=None, partitions=parts)}, brokers=brokers)

        def describe_configs(self, resources, **_):
            return {r: done({"cleanup.policy": SimpleNamespace(value="compact")}) for r in resources}

        def list_offsets(self, request, **_):
            return {tp: done(exc=TIMED_OUT) if leaders[tp.partition] == 2 else done(SimpleNamespace(offset=5))
                    for tp in request}

        def poll(self, _):
            return 0

    f = fetcher(Admin())
    try:
        snap = f.topics()
    finally:
        f.close()
    said = [k for k in snap.errors if k.startswith("list_offsets")]
    assert said == [f"list_offsets {label} to broker 2 (127.0.0.1:9092), 4 partition(s)"
                    for label in ("earliest", "latest", "read_committed")]
    assert snap.errors[said[0]].endswith("(unknown: a-1, a-2, a-3 and 1 more)"), snap.errors[said[0]]
    assert snap.error_kinds == ("timeout",) * 3
    assert snap.unknown == {"a": ("list_offsets", "timeout")}
    assert snap.topics["a"].partitions[0].latest == 5 and snap.topics["a"].partitions[1].latest == -1


def test_every_partitions_latest_offset_failing_puts_the_source_down_naming_the_broker_and_the_count():
    """The source down with one line per broker, not per partition: its id, address and partitions."""
    from boundedhttp import FetchError

    class Admin:
        def list_topics(self, **_):
            parts = {p: SimpleNamespace(leader=3, replicas=[3], isrs=[3]) for p in range(6)}
            return SimpleNamespace(topics={"a": SimpleNamespace(error=None, partitions=parts)},
                                   brokers={3: SimpleNamespace(host="127.0.0.1", port=9093)})

        def describe_configs(self, resources, **_):
            return {r: done({"cleanup.policy": SimpleNamespace(value="compact")}) for r in resources}

        def list_offsets(self, request, **_):
            return {tp: done(SimpleNamespace(offset=-1001)) for tp in request}  # librdkafka's "no answer"

        def poll(self, _):
            return 0

    f = fetcher(Admin())
    try:
        with pytest.raises(FetchError) as got:
            f.topics()
    finally:
        f.close()
    assert got.value.kind == "timeout"
    assert ("list_offsets of the compacted partitions failed for all 6: list_offsets latest to broker 3 "
            "(127.0.0.1:9093), 6 partition(s): ") in str(got.value)
    assert str(got.value).count("list_offsets latest to broker") == 1 and "(unknown: a-0, a-1, a-2 and 3 more)" in \
        str(got.value)
