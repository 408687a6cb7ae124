"""Parsing the broker's cleaner gauges from JMX exporter pages and Jolokia answers."""

import io
import json

import pytest

from boundedhttp import FetchError
from collectors.app import run_collect
from collectors.jmx.gauges import parse_exposition, parse_jolokia
from faultserver import FaultServer
from monitor.settings.config import BrokerConfig, ClusterConfig, Config

PAGE = """\
# HELP kafka_log_logcleanermanager_max_dirty_percent Attribute exposed for management
# TYPE kafka_log_logcleanermanager_max_dirty_percent untyped
kafka_log_logcleanermanager_max_dirty_percent 42.0
kafka_log_logcleanermanager_time_since_last_run_ms 1500.0
kafka_log_logcleaner_max_clean_time_secs -1.795345094E9
kafka_log_logcleaner_max_buffer_utilization_percent 12.0
kafka_log_logcleaner_cleaner_recopy_percent 80.0
kafka_log_logcleaner_max_compaction_delay_secs 3.0
kafka_log_logcleaner_deadthreadcount 1.0
kafka_log_logcleanermanager_uncleanable_bytes{logdirectory="\\"/data/a\\""} 100.0
kafka_log_logcleanermanager_uncleanable_partitions_count{logDirectory="/data/b"} 2.0
jvm_memory_bytes_used{area="heap"} 1.0
"""


def test_catch_all_names_in_base_units():
    g = parse_exposition(PAGE, ClusterConfig())
    assert g.dirty_ratio() == 0.42 and g.time_since_last_run_seconds() == 1.5
    assert g.max_clean_time_seconds() is None  # Kafka 4.x's negative value before the first clean
    assert g.buffer_utilization_ratio() == 0.12 and g.recopy_ratio() == 0.8
    assert g.compaction_delay_seconds() == 3 and g.dead_threads() == 1
    assert g.per_log_dir["uncleanable_bytes"] == {"/data/a": 100.0}
    assert g.per_log_dir["uncleanable_partitions_count"] == {"/data/b": 2.0}


def test_renamed_metrics_mapping():
    page = "site_cleaner_dirty 7\nsite_dead 0\n"
    c = ClusterConfig(metric_names={"max_dirty_percent": "site_cleaner_dirty", "dead_thread_count": "site_dead"})
    g = parse_exposition(page, c)
    assert g.dirty_ratio() == 0.07 and g.dead_threads() == 0


@pytest.mark.parametrize("page, kind", [
    ("<html><body><h1>Login</h1></body></html>", "parse"),
    ("kafka_log_logcleanermanager_max_dirty_percent {{{ garbage", "parse"),
    ("up 1\nsomething_else 2\n", "no_cleaner_metrics"),
    ("", "no_cleaner_metrics"),
])
def test_bad_pages(page, kind):
    with pytest.raises(FetchError) as exc:
        parse_exposition(page, ClusterConfig(), "http://b1:7071/metrics")
    assert exc.value.kind == kind and "http://b1:7071/metrics" in str(exc.value)


def test_jolokia_answer_and_error():
    ans = {"status": 200, "value": {
        "kafka.log:name=max-dirty-percent,type=LogCleanerManager": {"Value": 55},
        "kafka.log:name=DeadThreadCount,type=LogCleaner": {"Value": 0},
        'kafka.log:logDirectory="/data/a",name=uncleanable-bytes,type=LogCleanerManager': {"Value": 9},
    }}
    g = parse_jolokia(json.dumps(ans))
    assert g.dirty_ratio() == 0.55 and g.dead_threads() == 0 and g.per_log_dir["uncleanable_bytes"] == {"/data/a": 9.0}
    with pytest.raises(FetchError) as exc:
        parse_jolokia(json.dumps({"status": 404, "error": "javax.management.InstanceNotFoundException"}), "j")
    assert exc.value.kind == "jolokia"
    with pytest.raises(FetchError):
        parse_jolokia("<html>", "j")


# The catch-all rule's shape, as a real broker's agent serves it (tests/collectors/export/test_exporter_shapes_kafka.py
# records the full pages): the MBean's name attribute in a label, the log dir quoted as in the ObjectName.
CATCH_ALL = """\
# TYPE kafka_log_logcleaner_value untyped
kafka_log_logcleaner_value{name="DeadThreadCount"} 0.0
kafka_log_logcleaner_value{name="max-clean-time-secs"} 4.0
# TYPE kafka_log_logcleanermanager_value untyped
kafka_log_logcleanermanager_value{logDirectory="\\"/data/a\\"",name="uncleanable-partitions-count"} 3.0
kafka_log_logcleanermanager_value{name="max-dirty-percent"} 25.0
# TYPE kafka_utils_throttler_count untyped
kafka_utils_throttler_count{name="cleaner-io"} 123456.0
kafka_utils_throttler_count{name="replication-io"} 9.0
"""


@pytest.mark.parametrize("page", [CATCH_ALL, CATCH_ALL.replace("logcleaner_value", "LogCleaner_Value")
                                  .replace("logcleanermanager_value", "LogCleanerManager_Value")
                                  .replace("throttler_count", "Throttler_Count")])
def test_catch_all_shape_lowercased_or_not(page):
    g = parse_exposition(page, ClusterConfig())
    assert g.shape == "catch_all" and g.also_on_page == ()
    assert g.max_clean_time_seconds() == 4.0 and g.dead_threads() == 0 and g.dirty_ratio() == 0.25
    assert g.per_log_dir["uncleanable_partitions_count"] == {"/data/a": 3.0}
    assert g.cleaner_io_bytes() == 123456.0  # the cleaner's throttler, not another one


def test_two_shapes_on_one_page_the_rule_named_one_is_read_and_the_other_named():
    both = [PAGE + CATCH_ALL, CATCH_ALL + PAGE]  # the order on the page does not matter
    for page in both:
        g = parse_exposition(page, ClusterConfig())
        assert (g.shape, g.also_on_page) == ("rule_named", ("catch_all",))
        assert g.dirty_ratio() == 0.42 and g.dead_threads() == 1  # PAGE's values, not CATCH_ALL's


def test_a_page_in_no_known_shape_names_what_was_looked_for_and_the_closest_names():
    page = "kafka_log_log_cleaner_manager_max_dirty_percent 5\njvm_threads_current 30\n"
    with pytest.raises(FetchError) as exc:
        parse_exposition(page, ClusterConfig(), "http://b1:7071/metrics")
    msg = str(exc.value)
    assert exc.value.kind == "no_cleaner_metrics"
    assert "kafka_log_logcleanermanager_max_dirty_percent" in msg and 'kafka_log_logcleaner_value{name="..."}' in msg
    assert "closest names on the page: kafka_log_log_cleaner_manager_max_dirty_percent" in msg
    assert "jvm_threads_current" not in msg


def test_the_throttler_count_alone_is_not_a_cleaner_page():
    with pytest.raises(FetchError) as exc:
        parse_exposition('kafka_utils_throttler_count{name="cleaner-io"} 5\n', ClusterConfig())
    assert exc.value.kind == "no_cleaner_metrics"


def test_jolokia_reads_the_throttler_count_when_given():
    gauges = json.dumps({"status": 200, "value": {"kafka.log:name=max-dirty-percent,type=LogCleanerManager": {"Value": 5}}})
    io = json.dumps({"status": 200, "value": {"kafka.utils:name=cleaner-io,type=Throttler": {"Count": 77}}})
    assert parse_jolokia(gauges, "j", io).cleaner_io_bytes() == 77.0
    assert parse_jolokia(gauges, "j", io).shape == "jolokia"
    missing = json.dumps({"status": 404, "error": "javax.management.InstanceNotFoundException"})
    assert parse_jolokia(gauges, "j", missing).cleaner_io_bytes() is None


def test_collect_once_says_which_shape_of_a_two_shape_page_it_read():
    server = FaultServer(ok_body=(CATCH_ALL + PAGE).encode())
    try:
        out, err = io.StringIO(), io.StringIO()
        cfg = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", jmx_url=server.url),)),))
        assert run_collect(cfg, once=True, out=out, err=err) == 0, err.getvalue()
    finally:
        server.close()
    assert ('kafka_compaction_source_shape_info{also_on_page="catch_all",cluster="c",kind="jmx",shape="rule_named",'
            'source="jmx:c:1"} 1.0') in out.getvalue()
    assert "carries the rule_named and catch_all shapes; read rule_named" in err.getvalue()
    assert 'kafka_compaction_broker_max_dirty_ratio{broker="1",cluster="c"} 0.42' in out.getvalue()
