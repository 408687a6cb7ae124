"""The audit's report tables, the same whichever path found the rows: partitions, topics, tombstone
buckets, top keys, top producers, faults and the summary.

By now the tasks have left a few rows per partition (facts, key totals, top-key candidates, producer
and bucket partials, faults): the paths collect them in one Spark job, and the tables are made here
on the driver, with no further Spark job. Only key tables sent in parts are large: Spark merges and
finishes them first (``merge``). Each partition's row is made here from its facts and key totals
(``partition_row``).
"""

from __future__ import annotations

import functools

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from monitor.model import configdeps
from monitor.contract import valuesizes
from monitor.model.estimate import CleanerParams, estimate_clean
from spark_analysis import replicas
from spark_analysis.arrow_rows import NOTE
from spark_analysis.audit import pitfalls
from spark_analysis.audit.shapes import AuditInputs, AuditResult, Found
from spark_analysis.projection import ESTIMATED, HORIZON_COLUMNS
from spark_analysis.rows import KEY_TOTALS, PARTITION, PARTITION_COLUMNS, ROW_TYPES, fields_ddl, rows_of
from monitor.model.streams import streams_role
from spark_analysis.whatif import WHATIF_DDL, whatif_rows

BUCKETS_DDL = "topic string, bucket_start_ms bigint, tombstones bigint, past_retention bigint, bucket_ms int"
TOP_KEYS_DDL = ("topic string, partition int, key_hash bigint, key binary, updates bigint, tombstones bigint, "
                "obsolete_bytes double, rank int")
TOP_PRODUCERS_DDL = ("topic string, producer_id bigint, records bigint, obsolete_bytes double, "
                     "obsolete_records bigint, rank int")
FAULTS_DDL = "segment string, fault_kind string, fault_position bigint, fault_reason string"


def report(spark: SparkSession, inputs: AuditInputs, found: Found, progress) -> AuditResult:
    from spark_analysis.merge import finish_key_parts

    small = found.rows
    totals = sum_rows(rows_of(small, "key_totals"), ("topic", "partition"))
    parted = {(f["topic"], f["partition"]) for f in found.facts} - set(totals)
    if parted:
        progress(f"merging the key tables of {len(parted)} partition(s) with more keys than a task holds")
        keys = found.out.filter(F.col("key").isNotNull()).select("key.*")
        small = pa.concat_tables([small, finish_key_parts(keys, inputs.top_n).toArrow().cast(small.schema)])
        totals = sum_rows(rows_of(small, "key_totals"), ("topic", "partition"))
    progress("estimates, top keys, top producers, tombstone build-up")
    rows = sorted((config_columns(partition_row(f, totals.get((f["topic"], f["partition"]), {}), inputs.cleaner),
                                  inputs.effective(f["topic"]))
                   for f in found.facts), key=lambda r: (r["topic"], r["partition"]))
    bucket = max(f["bucket_ms"] for f in found.facts)  # the tasks' own (the given one, or by their span)
    progress("producer pitfalls: empty values, keyless records, keys in several partitions, value sizes")
    rows, topics = with_pitfalls(found, small, rows, topic_rows(rows))
    for t in topics:  # monitor.verdicts.restore: the size after the next clean over the stated consumer throughput
        t["restore_seconds"] = inputs.restore.seconds(t["next_clean_bytes"]) if inputs.config(t["topic"]).compacted \
            and t["next_clean_bytes"] is not None else None
        t.update(config_of(inputs.effective(t["topic"])))
    summary = summarize(inputs, rows, bucket, found.faults)
    summary.update(config_summary(inputs, topics))
    summary.update(inputs.restore.as_summary())
    summary.update({k: sum(t[k] for t in topics) for k in pitfalls.SUMMARY_KEYS})
    summary["value_size_method"] = valuesizes.METHOD
    summary["decoders"] = decoders(found.facts)
    limit = decompressed_limit(inputs, found.facts)
    if limit is not None:  # only where a topic sets a cap or its value is unknown, as the collector's metrics
        summary["decompressed_limit"] = limit
    summary["replicas"] = replicas.summary(found.replicas, found.bytes_all_replicas if found.bytes_all_replicas
                                           is not None else summary["bytes"])
    whatif = whatif_rows(found.facts, rows, inputs)  # monitor.model.whatif: other settings, from the rows above
    return AuditResult(
        local_frame(spark, rows, PARTITION_DDL), local_frame(spark, topics, TOPIC_DDL),
        local_frame(spark, bucket_rows(rows_of(small, "bucket"), bucket), BUCKETS_DDL),
        local_frame(spark, top_key_rows(rows_of(small, "top_key"), inputs.top_n), TOP_KEYS_DDL),
        local_frame(spark, top_producer_rows(rows_of(small, "producer"), inputs.top_n), TOP_PRODUCERS_DDL),
        local_frame(spark, [f for f in found.faults if f["fault_kind"] != NOTE], FAULTS_DDL), summary,
        local_frame(spark, found.replicas, replicas.REPLICAS_DDL), local_frame(spark, whatif, WHATIF_DDL))


def local_frame(spark: SparkSession, rows: list, ddl: str):
    """A report table (dicts, by column name) as a DataFrame of ``ddl``, handed to Spark as an Arrow table:
    Spark holds it as local data. Made from the Python rows themselves, classic PySpark makes it an RDD,
    and every action on it (a collect, each output written) runs a Spark job over it: about 0.17 s a
    collect on 2 cores against 0.05 s from Arrow."""
    schema, arrow_schema = _schemas(ddl)
    return spark.createDataFrame(pa.Table.from_pylist(rows, schema=arrow_schema), schema)


@functools.lru_cache(maxsize=None)
def _schemas(ddl: str):
    """A report table's Spark and Arrow schemas, parsed once a process: PySpark parses a DDL string in the
    JVM (a Py4J round trip, 2 to 6 ms), and an audit makes nine tables a run from the same few strings."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import _parse_datatype_string

    schema = _parse_datatype_string(ddl)
    return schema, to_arrow_schema(schema)


def partition_row(facts: dict, totals: dict, cleaner: CleanerParams) -> dict:
    """The audit's row for one partition (``rows.PARTITION``): its facts, its key totals (from the
    fold; empty when it has no keyed record) and the cleaner's estimate.

    Its sizes follow the next-clean projection (``spark_analysis.projection``): counted from the
    segments, that figure is the partition's; from a dump or a topic, the fold's byte shares give the
    estimate (``projection_method`` says which). Reclaimable is what the next clean removes: the bytes
    less those retention deletes (``compact,delete``) less what the clean leaves; unknown when the
    projection is. The fold's shares stay the per-key, top-key and producer figures' estimates."""
    est = estimate_clean(facts["clean_bytes"], facts["cleanable_bytes"], totals.get("dirty_distinct_keys") or 0, cleaner)
    row = {k: facts.get(k) for k in _FACT_COLUMNS}  # a records-path partition's facts have no counted figures
    row.update({k: totals.get(k) or 0 for k, _ in KEY_TOTALS if k != "share_reclaimable_bytes"})
    gone = facts.get("retention_deleted_bytes") or 0  # compact,delete: what retention deletes goes whole
    if facts.get("projection_method") == ESTIMATED:
        shares = float(totals.get("share_reclaimable_bytes") or 0.0) + (facts.get("txn_reclaimable_bytes") or 0.0)
        row["next_clean_bytes"] = max(facts["bytes"] - gone - round(shares), 0)
        row["removable_records"] += facts.get("txn_removable_records") or 0  # aborted data and markers a clean drops
    else:  # counted: what the next clean removes, unknown with the projection
        row["removable_records"] = facts.get("projected_removable_records")
    nxt = row.get("next_clean_bytes")
    row.update({"reclaimable_bytes": None if nxt is None else max(facts["bytes"] - gone - nxt, 0),
                "cleaner_passes": est.passes, "estimated_clean_seconds": est.seconds})
    return row


_FACT_COLUMNS = [n for n, _ in ROW_TYPES["facts"] if n in frozenset(PARTITION_COLUMNS)]


def config_of(ec) -> dict:
    """A row's config columns: where the topic's config came from (``EffectiveConfig.source``: admin,
    config, default, or unknown) and, when values are unknown, why and which."""
    reason = None
    if ec.unknown_keys:
        why = ec.refusal.text if ec.refusal is not None else "not given"
        reason = f"{', '.join(sorted(ec.unknown_keys))} unknown: {why}"
    return {"config_source": ec.source, "config_unknown_reason": reason}


DECOMPRESSED_CHECK = "decompressed_limit_below_records"  # monitor.verdicts.configreview's check, the collector's
DECOMPRESSED_CAUSE = "record_over_decompressed_limit"  # monitor.verdicts.causes' cause, once the cleaner fails
RECORDS_PATH = ("the input is records (a dump or a topic), not segments: no compressed batch's records were "
                "measured")


def decompressed_limit(inputs: AuditInputs, facts: list) -> dict | None:
    """Kafka 4.4's max.decompressed.message.bytes against each partition's largest decompressed record (the
    facts' ``max_decompressed_record_bytes``, from the record pass), judged by the collector's config-review
    check (``monitor.verdicts.configreview``: its test, its sentence and its fix) and named by its cause: for
    the partitions of the topics that set a cap, and of those whose value is unknown (with why: never taken
    for Kafka's default). None when no audited topic sets one (summary.json then has no such key, as the
    collector exports no series for a topic without a cap)."""
    from monitor.model.configdeps import MAX_DECOMPRESSED
    from monitor.verdicts.configreview import CHECKS, Finding, ReviewLimits, TopicFacts
    from monitor.verdicts.fixes import BOOTSTRAP_PLACEHOLDER

    check, out = CHECKS[DECOMPRESSED_CHECK], []
    for f in sorted(facts, key=lambda f: (f["topic"], f["partition"])):
        ec, largest = inputs.effective(f["topic"]), f.get("max_decompressed_record_bytes")
        row = {"topic": f["topic"], "partition": f["partition"], "max_decompressed_record_bytes": largest,
               "max_decompressed_message_bytes": None, "over": None, "summary": None, "fix": None,
               "unknown_reason": None}
        if not ec.known(MAX_DECOMPRESSED):
            row["unknown_reason"] = config_of(ec)["config_unknown_reason"]
        elif ec.config.decompressed_cap is None:
            continue
        elif largest is None:
            row.update(max_decompressed_message_bytes=ec.config.decompressed_cap, unknown_reason=RECORDS_PATH)
        else:
            found = check.test(TopicFacts(f["topic"], ec.config, max_decompressed_record_bytes=largest),
                               ReviewLimits(), BOOTSTRAP_PLACEHOLDER)
            over = isinstance(found, Finding)
            row.update(max_decompressed_message_bytes=ec.config.decompressed_cap, over=over,
                       summary=found.summary if over else None, fix=found.fix if over else None)
        out.append(row)
    if not out:
        return None
    return {"check": DECOMPRESSED_CHECK, "cause": DECOMPRESSED_CAUSE, "partitions": out,
            "over": sum(bool(r["over"]) for r in out), "unknown": sum(r["unknown_reason"] is not None for r in out)}


def config_columns(row: dict, ec) -> dict:
    """The partition row with the figures that depend on an unknown config value set to null
    (``CONFIG_DEPENDENT``) and its config columns (``config_of``)."""
    out = {**row, **config_of(ec)}
    for col, keys in CONFIG_DEPENDENT.items():
        if not ec.known(*keys):
            out[col] = None
    return out


def config_summary(inputs: AuditInputs, topics: list) -> dict:
    """summary.json's topic configs: each audited topic's source (and what is unknown, and why), and
    how many partitions have figures left unknown (left out of the totals, which say so)."""
    per = {}
    for t in topics:
        ec = inputs.effective(t["topic"])
        per[t["topic"]] = {"source": ec.source, "unknown": sorted(ec.unknown_keys),
                           "reason": config_of(ec)["config_unknown_reason"]}
    unknown = [t for t in topics if per[t["topic"]]["unknown"]]
    return {"topic_configs": per, "config_unknown": {
        "topics": len(unknown), "partitions": sum(t["partitions"] for t in unknown),
        "note": ("the totals of figures that depend on a topic's config count only the partitions whose "
                 "config is known" if unknown else "")}}


def with_pitfalls(found: Found, small, rows: list, topics: list) -> tuple[list, list]:
    """The partition and topic rows with the producer-pitfall columns (``audit.pitfalls``)."""
    stats = pitfalls.record_stats(rows_of(small, "record_stats"))
    sizes = rows_of(small, "value_size")
    hist, topic_hist = pitfalls.histograms(sizes), pitfalls.histograms(sizes, by_topic=True)
    counts: dict = {}
    for r in rows:
        counts[r["topic"]] = counts.get(r["topic"], 0) + 1
    keys: dict = {}
    for r in rows:
        keys[r["topic"]] = keys.get(r["topic"], 0) + (r["distinct_keys"] or 0)
    several, several_topic = pitfalls.keys_in_several_partitions(found.out, {t for t, n in counts.items() if n > 1},
                                                                 keys)
    out_rows = []
    for r in rows:
        tp = (r["topic"], r["partition"])
        out_rows.append({**r, **pitfalls.columns(stats.get(tp), hist.get(tp), r["keys_last_empty_value"],
                                                 several.get(tp, 0))})
    out_topics = []
    for t in topics:
        mine = [r for r in out_rows if r["topic"] == t["topic"]]
        tstats = {k: sum(r[k] for r in mine) for k in ("keyless_records", "empty_value_records")}
        tstats["value_bytes_max"] = max((r["value_bytes_max"] for r in mine if r["value_bytes_max"] is not None),
                                        default=None)
        out_topics.append({**t, **pitfalls.columns(tstats, topic_hist.get(t["topic"]),
                                                   sum(r["keys_last_empty_value"] for r in mine),
                                                   several_topic.get(t["topic"], 0))})
    return out_rows, out_topics


def sum_rows(parts, by: tuple) -> dict:
    """Partial rows summed per ``by`` (partial totals of disjoint keys or records add up)."""
    out: dict = {}
    for t in parts:
        acc = out.setdefault(tuple(t[k] for k in by), dict(zip(by, (t[k] for k in by))))
        for k, v in t.items():
            if k not in by:
                acc[k] = acc.get(k, 0) + (v or 0)
    return out


def bucket_rows(parts: list, bucket: int) -> list:
    """Tombstones per topic and bucket (tasks that chose a finer bucket are floored to ``bucket``)."""
    floored = [{**b, "bucket_start_ms": b["bucket_start_ms"] // bucket * bucket} for b in parts]
    return [{**b, "bucket_ms": bucket} for _, b in sorted(sum_rows(floored, ("topic", "bucket_start_ms")).items())]


def ranked(rows: list, order, n: int) -> list:
    """The first ``n`` rows of each topic by ``order``, with their ``rank``."""
    out, seen = [], {}
    for r in sorted(rows, key=lambda r: (r["topic"], order(r))):
        seen[r["topic"]] = seen.get(r["topic"], 0) + 1
        if seen[r["topic"]] <= n:
            out.append({**r, "rank": seen[r["topic"]]})
    return out


def top_key_rows(candidates: list, n: int) -> list:
    # a key is a key of one partition: compaction never meets the same key in two partitions
    return ranked(candidates, lambda r: (-r["updates"], r["key_hash"], r["partition"]), n)


def top_producer_rows(parts: list, n: int) -> list:
    """Producers by obsolete bytes: all they wrote to keyed records - what is still the latest of its key.
    A producer id is unknown (null) for a live topic."""
    producers = [{"topic": p["topic"], "producer_id": p["producer_id"], "records": p["records"],
                  "obsolete_bytes": float(p["written_bytes"] - p["latest_bytes"]),
                  "obsolete_records": p["records"] - p["latest_records"]}
                 for p in sum_rows(parts, ("topic", "producer_id")).values()]
    return ranked(producers, lambda r: (-r["obsolete_bytes"], r["producer_id"] is not None, r["producer_id"] or 0), n)


def broker_rows(inputs: AuditInputs, rows: list) -> list[dict]:
    """Each broker's wall-clock time to clean the dirty sections of the partitions it holds a replica of
    (every broker cleans its own copy), with its own cleaner settings (``monitor.model.estimate.wall_clock``).
    Without the brokers' settings, one row (broker None) for the run's model; without the replica
    placement, each broker is given every audited partition, and the row says so."""
    from monitor.model.estimate import estimate_clean, wall_clock

    brokers = inputs.brokers or {None: inputs.cleaner}
    out = []
    for b, p in sorted(brokers.items(), key=lambda kv: (len(str(kv[0])), str(kv[0]))):
        if b is not None and inputs.replicas:
            mine = [r for r in rows if b in inputs.replicas.get((r["topic"], r["partition"]), ())]
            hosts = "its replicas (admin API)"
        else:
            mine, hosts = rows, "every audited partition (replica placement unknown)"
        mine = [r for r in mine if r["cleanable_bytes"] is not None]  # config unknown: no estimate
        cleans = [estimate_clean(r["clean_bytes"], r["cleanable_bytes"], r["dirty_distinct_keys"] or 0, p)
                  for r in mine]
        w = wall_clock(cleans, p)
        out.append({"broker": b, "partitions": len(mine), "hosts": hosts, "threads": p.threads,
                    "keys_per_pass": p.keys_per_pass, "dedupe_buffer_size": p.dedupe_buffer_size,
                    "load_factor": p.load_factor, **throttle_fields(p),
                    "sources": dict(p.sources), "summed_seconds": w.summed_seconds,
                    "longest_clean_seconds": w.longest_seconds, "schedule_seconds": w.schedule_seconds,
                    "throttle_seconds": w.throttle_seconds, "wall_clock_seconds": w.seconds, "basis": w.basis})
    return out


def throttle_fields(p) -> dict:
    """The throttle for summary.json: its value, or null with the reason (JSON has no Infinity)."""
    from monitor.model.estimate import UNTHROTTLED

    return {"io_max_bytes_per_second": p.throttle,
            "io_max_bytes_per_second_reason": None if p.throttle is not None else UNTHROTTLED}


def decoders(facts: list) -> dict:
    """Partitions per record decoder their task ran ({"c": n} when every executor had the C
    extension); empty when the records were not decoded by the audit's tasks (dumps, a topic)."""
    out: dict = {}
    for f in facts:
        if f.get("decoder"):
            out[f["decoder"]] = out.get(f["decoder"], 0) + 1
    return dict(sorted(out.items()))


def summarize(inputs: AuditInputs, rows: list, bucket: int, faults: list) -> dict:
    brokers = broker_rows(inputs, rows)
    vanished = [f for f in faults if f["fault_kind"] == "vanished"]
    fault_rows = [f for f in faults if f["fault_kind"] not in ("vanished", NOTE)]
    return {
        "input_kind": inputs.kind,
        "generated_at_ms": inputs.now_ms,
        "partitions": len(rows),
        "topics": len({r["topic"] for r in rows}),
        "records": sum(r["records"] for r in rows),
        "bytes": sum(r["bytes"] for r in rows),
        **projection_sums(rows),  # reclaimable: 0 when no partition's is known (a number for the dashboard)
        "reclaimable_bytes": sum(r["reclaimable_bytes"] or 0 for r in rows),
        "retention_deleted_bytes": sum(r["retention_deleted_bytes"] or 0 for r in rows),  # compact,delete
        "cleanable_bytes": sum(r["cleanable_bytes"] or 0 for r in rows),
        "estimated_clean_seconds": sum(r["estimated_clean_seconds"] or 0 for r in rows),
        "estimated_wall_clock_seconds": max((b["wall_clock_seconds"] for b in brokers), default=0.0),
        "tombstones": sum(r["tombstones"] for r in rows),
        "tombstones_past_retention": sum(r["tombstones_past_retention"] or 0 for r in rows),
        "faults": len(fault_rows),
        "vanished_segments": len(vanished),
        "notes": [f["fault_reason"] for f in faults if f["fault_kind"] == NOTE][:1000],  # read differently, and why
        "fault_list": [{"file": f["segment"], "kind": f["fault_kind"], "position": f["fault_position"],
                        "reason": f["fault_reason"]} for f in fault_rows[:1000]],
        "cleaner": {"threads": inputs.cleaner.threads, "keys_per_pass": inputs.cleaner.keys_per_pass,
                    "throughput_bytes_per_second": inputs.cleaner.throughput,
                    "throughput_source": inputs.cleaner.throughput_source,
                    **throttle_fields(inputs.cleaner),
                    "dedupe_buffer_size": inputs.cleaner.dedupe_buffer_size,
                    "load_factor": inputs.cleaner.load_factor, "sources": dict(inputs.cleaner.sources)},
        "brokers": brokers,
        "tombstone_bucket_ms": bucket,
    }


TOPIC_SUMS = ["records", "bytes", "distinct_keys", "obsolete_records", "cleanable_bytes", "estimated_clean_seconds",
              "tombstones", "tombstones_past_retention", "keys_last_tombstone", "retention_deleted_bytes"]
# the projection's figures (``spark_analysis.projection``): summed over the partitions where they are known,
# with how many were left out (``*_unknown_partitions``); null when none is known
PROJECTED_SUMS = ["reclaimable_bytes", "next_clean_bytes", "settled_bytes"] + HORIZON_COLUMNS
TOPIC_DDL = ("topic string, partitions long, records long, bytes long, distinct_keys long, obsolete_records long, "
             "reclaimable_bytes long, next_clean_bytes long, settled_bytes long, projection_method string, "
             "next_clean_unknown_partitions long, settled_unknown_partitions long, "
             "cleanable_bytes long, max_cleanable_ratio double, "
             "estimated_clean_seconds double, tombstones long, tombstones_past_retention long, "
             "keys_last_tombstone long, " + ", ".join(f"{c} long" for c in HORIZON_COLUMNS) + ", "
             "next_removable_ms long, streams_role string, retention_deleted_bytes long, restore_seconds double, "
             "config_source string, config_unknown_reason string, "
             + pitfalls.TOPIC_DDL)


def projection_sums(rows: list[dict]) -> dict:
    """The projection's figures over ``rows`` (a topic's, or every partition's for the summary): each
    summed over the partitions that know it, null when none does; how many partitions were left out of
    the next-clean and settled sums; the earliest next removal; the methods (``counted``, ``estimated``)."""
    out = {k: (None if all(r[k] is None for r in rows) else sum(r[k] for r in rows if r[k] is not None))
           for k in PROJECTED_SUMS}
    out["next_clean_unknown_partitions"] = sum(r["next_clean_bytes"] is None for r in rows)
    out["settled_unknown_partitions"] = sum(r["settled_bytes"] is None for r in rows)
    out["next_removable_ms"] = min((r["next_removable_ms"] for r in rows if r["next_removable_ms"] is not None),
                                   default=None)
    out["projection_method"] = ", ".join(sorted({r["projection_method"] for r in rows if r["projection_method"]}))
    return out


def topic_rows(rows: list[dict]) -> list[dict]:
    """Per-topic sums of the partition rows, the most reclaimable topic first."""
    out: dict = {}
    mine: dict = {}
    for r in rows:
        t = out.setdefault(r["topic"], {"topic": r["topic"], "partitions": 0, "max_cleanable_ratio": None,
                                        **{k: 0 for k in TOPIC_SUMS}})
        mine.setdefault(r["topic"], []).append(r)
        t["partitions"] += 1
        for k in TOPIC_SUMS:  # a figure unknown (its config) for a partition is unknown for its topic
            t[k] = None if t[k] is None or (r[k] is None and k in CONFIG_DEPENDENT
                                                            and r.get("config_unknown_reason")) else t[k] + (r[k] or 0)
        if r["cleanable_ratio"] is not None:
            t["max_cleanable_ratio"] = max(t["max_cleanable_ratio"] or 0.0, r["cleanable_ratio"])
    for t in out.values():
        t.update(projection_sums(mine[t["topic"]]))
        t["estimated_clean_seconds"] = None if t["estimated_clean_seconds"] is None else float(t["estimated_clean_seconds"])
        t["streams_role"] = streams_role(t["topic"])  # monitor.model.streams: "" when not a Streams internal topic
    return sorted(out.values(), key=lambda t: -(t["reclaimable_bytes"] or 0))


# the partitions table: rows.PARTITION (declared there once, typed by the row types it is made from),
# then the producer-pitfall columns
PARTITION_DDL = fields_ddl(PARTITION) + ", " + pitfalls.PARTITION_DDL


# the partition columns that depend on the topic's config, by the Kafka config names they read
# (monitor.model.configdeps, the collector's and the causes' too): a column whose config is unknown (the admin
# API asked and did not tell) is null, never figured with Kafka's defaults
CONFIG_DEPENDENT = configdeps.columns_depends(PARTITION_COLUMNS)
