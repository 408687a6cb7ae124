"""Kafka's temporary files planted in a real broker's partition folder, named as Kafka names them
(LogFileUtils: ``.cleaned``, ``.swap``, ``.deleted`` after the file's own suffix): the collector counts
them per kind once they are older than the topic's file.delete.delay.ms, ``logdir`` and ``explain`` name
them; then the broker's own recovery on start (LogLoader.removeTempFilesAndCollectSwapFiles) deletes the
``.cleaned`` and ``.deleted`` files and completes the ``.swap`` (renames it over the segment it copies),
and the counts fall to 0."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from collecting import make_collector, pval
from cli.explain_cmd import run_explain
from monitor.contract.units import bytes_iec
from cli.logdir_cmd import run_logdir
from kafkatools import compacted, create_topic, localbroker, own_broker, partition_dir, segment_bases, write_rounds
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from waiting import wait_for

pytestmark = pytest.mark.slow  # a broker of its own, restarted

LEFTOVER = "kafka_compaction_partition_leftover_files"


def counts(col, topic, log_dir):
    """The counts per kind after a refresh; the sources' errors instead while one is down (the broker
    restarting), so that a wait shows them if it never ends."""
    if not col.runner.refresh_all():
        return {"down": [s.last_error for s in col.store.statuses() if not s.up]}
    return {k: pval(col.registry, LEFTOVER, topic, log_dir=log_dir, kind=k) for k in ("cleaned", "swap", "deleted")}


def test_planted_leftovers_are_counted_named_and_gone_after_kafkas_recovery(tmp_path):
    d = tmp_path / "broker"
    with own_broker(d, "leftovers broker") as st:
        # held dirty (min.compaction.lag.ms) so that no clean of the broker's own touches the folder;
        # file.delete.delay.ms of 1 s: a planted file is a leftover once untouched for longer than that
        topic = create_topic(st.bootstrap, "leftovers", **compacted(**{"min.compaction.lag.ms": 3_600_000,
                                                                       "file.delete.delay.ms": 1000}))
        write_rounds(st.bootstrap, topic, 3, keys=20)
        folder = partition_dir(st.log_dir, topic)
        first, second = segment_bases(folder)[:2]  # two rolled segments
        seg = lambda base, suffix: folder / f"{base:020d}{suffix}"  # noqa: E731
        original = seg(first, ".log").read_bytes()
        planted = {f"{first:020d}.log.swap": len(original), f"{second:020d}.log.cleaned": 0,
                   f"{second:020d}.log.deleted": seg(second, ".log").stat().st_size}
        for suffix in (".log", ".index", ".timeindex"):  # an interrupted swap: the segment's copy, as .swap
            shutil.copyfile(seg(first, suffix), Path(str(seg(first, suffix)) + ".swap"))
        seg(second, ".log.cleaned").write_bytes(b"")  # a clean that never wrote a batch
        shutil.copyfile(seg(second, ".log"), seg(second, ".log.deleted"))

        col = make_collector(st)
        try:
            want = {"cleaned": 1, "swap": 3, "deleted": 1}
            wait_for(lambda: counts(col, topic, st.log_dir) == want, 60,
                     f"the planted files counted once older than file.delete.delay.ms: {want}")

            # no broker for logdir and explain: the topic's configs from the config file
            cfg = Config(clusters=(ClusterConfig(name="local", brokers=(BrokerConfig(
                id="1", log_dirs=(st.log_dir,)),), topics={topic: {"cleanup.policy": "compact",
                                                                    "file.delete.delay.ms": "1000"}}),))
            out = io.StringIO()
            run_logdir([st.log_dir], config=cfg, fmt="json", out=out, err=io.StringIO())
            row = next(r for r in json.loads(out.getvalue()) if r["topic"] == topic)
            named = {x["file"]: (x["kind"], x["bytes"]) for x in row["leftover_files"]}
            assert {n: named[n] for n in planted} == {n: (n.rsplit(".", 1)[1], b) for n, b in planted.items()}
            assert all(x["unchanged_ms"] > 1000 for x in row["leftover_files"])
            out = io.StringIO()
            run_logdir([st.log_dir], config=cfg, out=out, err=io.StringIO())
            assert f"leftover: {st.log_dir}/{topic}-0/{second:020d}.log.cleaned: cleaned, 0 B" in out.getvalue()
            out = io.StringIO()
            run_explain([topic], config=cfg, log_dirs=[st.log_dir], fmt="json", out=out, err=io.StringIO())
            evidence = json.loads(out.getvalue())[0]["evidence"]["leftover_files"]
            assert sorted(x["file"] for x in evidence) == sorted(named)
            out = io.StringIO()
            run_explain([topic], config=cfg, log_dirs=[st.log_dir], out=out, err=io.StringIO())
            assert f"leftover:  {second:020d}.log.deleted (deleted, {bytes_iec(planted[f'{second:020d}.log.deleted'])}" \
                in out.getvalue()

            localbroker.stop(d, progress=lambda *_: None)
            localbroker.start(d, progress=lambda *_: None)
            left = sorted(p.name for p in folder.iterdir() if p.suffix in (".cleaned", ".swap", ".deleted"))
            assert left == []  # .cleaned and .deleted deleted, .swap renamed into place
            assert seg(first, ".log").read_bytes() == original
            wait_for(lambda: counts(col, topic, st.log_dir) == dict.fromkeys(want, 0), 60,
                     "no leftover counted after the broker's recovery")
        finally:
            col.close()
