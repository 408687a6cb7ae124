"""Kafka Streams internal topic names created as plain compacted topics on the real broker: the collector's
info metric and ``logdir`` label them; an ordinary topic beside them is not labelled."""

from __future__ import annotations

import io
import json
import uuid

from collecting import make_collector, refresh
from cli.logdir_cmd import run_logdir
from kafkatools import compacted, create_topic, produce
from monitor.settings.config import BrokerConfig, ClusterConfig, Config

INFO = "kafka_compaction_topic_streams_info"


def test_streams_topics_labelled_by_role(kafka):
    app = f"app-{uuid.uuid4().hex[:6]}"  # an application.id, as ProcessorStateManager prefixes it
    names = {f"{app}-counts-store-changelog": "changelog", f"{app}-KSTREAM-AGGREGATE-0000000003-repartition":
             "repartition", f"{app}-plain": ""}
    for t in names:
        create_topic(kafka.bootstrap, t, **compacted())
        produce(kafka.bootstrap, t, [(b"k", b"v")])
    col = make_collector(kafka)
    try:
        reg = refresh(col)
        got = {s.labels["topic"]: s.labels["streams_role"] for m in reg.collect() for s in m.samples
               if s.name == INFO and s.labels["topic"] in names}
        assert got == {t: r for t, r in names.items() if r}
    finally:
        col.close()
    cfg = Config(clusters=(ClusterConfig(name="local", brokers=(BrokerConfig(id="1", log_dirs=(kafka.log_dir,)),),
                                         topics={t: {"cleanup.policy": "compact"} for t in names}),))
    out = io.StringIO()
    run_logdir([kafka.log_dir], config=cfg, fmt="json", out=out, err=io.StringIO())
    rows = {r["topic"]: r["streams_role"] for r in json.loads(out.getvalue()) if r["topic"] in names}
    assert rows == names
