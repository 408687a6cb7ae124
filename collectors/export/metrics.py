"""Every metric the collector exports, defined once: name, type, help, labels.

Names follow Prometheus conventions (base units in the name, ``_total`` only on
counters) and use Kafka's label names: cluster, broker, topic, partition.
The rule table (``monitor/contract/rules.py``), hence the alert rules and the dashboard's evaluator, refer to
these names only (a test checks it).

Each family's owner, the collector role that exports it (``monitor.settings.roles``), is declared here too, once:
a section's ``_owned_by`` sets it for the families below it, an ``owner=`` on one family overrides it. A
``cluster`` family comes from the admin API, a ``broker`` family from a broker's log dirs, log-cleaner.log or
JMX page; ``both``: the collector's own health, of each collector's own sources.

Each family's stability (``stability``), as kube-state-metrics states it: ``stable`` -- its name, type and labels
change only through a deprecation cycle (``tests/collectors/export/stable_metrics.txt`` pins them); ``experimental``
-- they may change in any release. It is declared once, in ``STABLE`` at the end; a family not listed there is
experimental, so a new one starts experimental. It is documentation, not a label: the exposition does not show it.
"""

from __future__ import annotations

from monitor.contract.metricnames import PREFIX
from monitor.settings.roles import BOTH, BROKER, CLUSTER, OWNERS

B = ("cluster", "broker")
P = ("cluster", "broker", "topic", "partition")
G = ("cluster", "group", "topic", "partition")

METRICS: dict[str, tuple[str, str, tuple[str, ...]]] = {}
OWNER: dict[str, str] = {}  # family -> the role that exports it (monitor.settings.roles.OWNERS)
_section = {"owner": None}


def _owned_by(owner: str) -> None:
    """The owner of the families declared after this, up to the next ``_owned_by``."""
    assert owner in OWNERS, owner
    _section["owner"] = owner


def _m(name: str, kind: str, help_: str, labels: tuple[str, ...], owner: str | None = None) -> str:
    full = PREFIX + name
    METRICS[full] = (kind, help_, labels)
    OWNER[full] = owner or _section["owner"]
    return full


_owned_by(BROKER)
# --- broker log-cleaner gauges, re-exported in base units (JMX exporter or Jolokia) ---
BROKER_DIRTY_RATIO = _m("broker_max_dirty_ratio", "gauge",
                        "Kafka's max-dirty-percent as a 0..1 ratio: the highest cleanable dirty ratio of the cleaner's last pick.", B)
BROKER_SINCE_LAST_RUN = _m("broker_cleaner_time_since_last_run_seconds", "gauge",
                           "Seconds since a cleaner thread last looked for work (time-since-last-run-ms).", B)
BROKER_CLEAN_TIME = _m("broker_cleaner_max_clean_time_seconds", "gauge",
                       "Longest last clean of any cleaner thread (max-clean-time-secs); absent before the first clean.", B)
BROKER_BUFFER = _m("broker_cleaner_max_buffer_utilization_ratio", "gauge",
                   "Highest dedupe-buffer utilization of the last cleans (max-buffer-utilization-percent / 100).", B)
BROKER_RECOPY = _m("broker_cleaner_recopy_ratio", "gauge",
                   "Bytes written / bytes read by the last cleans (cleaner-recopy-percent / 100).", B)
BROKER_DELAY = _m("broker_max_compaction_delay_seconds", "gauge",
                  "How far past max.compaction.lag.ms the most overdue log was (max-compaction-delay-secs).", B)
BROKER_DEAD = _m("broker_cleaner_dead_threads", "gauge", "Log cleaner threads that died (DeadThreadCount).", B)
BROKER_CLEANER_IO = _m("broker_cleaner_io_bytes", "counter",
                       "Bytes the log cleaner read and wrote, counted by its I/O throttler (kafka.utils:type=Throttler,"
                       "name=cleaner-io, Count). Its rate is the cleaner's I/O load averaged over idle time, not the "
                       "speed of a clean; a rate at log.cleaner.io.max.bytes.per.second means the throttle holds the "
                       "cleaner back.", B)
BROKER_UNCLEANABLE_PARTS = _m("broker_uncleanable_partitions", "gauge",
                              "Partitions the cleaner marked uncleanable after an error, per log dir.", B + ("log_dir",))
BROKER_UNCLEANABLE_BYTES = _m("broker_uncleanable_bytes", "gauge",
                              "Cleanable bytes of the uncleanable partitions, per log dir.", B + ("log_dir",))

# --- the broker's log cleaner settings (admin API describe_configs on each broker; monitor.model.topicconfig's
# precedence: admin > config file > unknown). source: admin | config. A setting the broker refused to
# describe and the config file does not give has no sample (never Kafka's default in its place);
# broker_cleaner_settings_known says which brokers answered, and why not. ---
_owned_by(CLUSTER)  # from the admin API: one cluster-role collector exports every broker's
BS = B + ("source",)
BROKER_CLEANER_ENABLED = _m("broker_cleaner_enabled", "gauge",
                            "log.cleaner.enable: 1 when the broker runs a log cleaner, 0 when it has none "
                            "(its compacted partitions are never cleaned).", BS)
BROKER_CLEANER_THREADS = _m("broker_cleaner_threads", "gauge", "log.cleaner.threads: cleaner threads.", BS)
BROKER_CLEANER_DEDUPE = _m("broker_cleaner_dedupe_buffer_bytes", "gauge",
                           "log.cleaner.dedupe.buffer.size: the offset maps' memory, shared by all threads.", BS)
BROKER_CLEANER_LOAD = _m("broker_cleaner_io_buffer_load_factor", "gauge",
                         "log.cleaner.io.buffer.load.factor: how full an offset map may get (0..1).", BS)
BROKER_CLEANER_IO_MAX = _m("broker_cleaner_io_max_bytes_per_second", "gauge",
                           "log.cleaner.io.max.bytes.per.second: the throttle on the cleaner's read plus write "
                           "I/O, all threads together (Kafka's default 1.7976931348623157e308: no throttle).", BS)
BROKER_CLEANER_BACKOFF = _m("broker_cleaner_backoff_seconds", "gauge",
                            "log.cleaner.backoff.ms in seconds: how long an idle cleaner thread sleeps.", BS)
BROKER_CLEANER_KNOWN = _m("broker_cleaner_settings_known", "gauge",
                          "1 when the broker described its cleaner settings (admin API); 0 when it refused or "
                          "failed, with the reason (cut to 200 characters).", B + ("reason",))

_owned_by(BROKER)
# --- per partition, computed from the log dirs as LogCleanerManager does ---
# cleanable_*: Kafka's view (LogCleanerManager's cleanableBytes and cleanable ratio, which the cleaner
# compares with min.cleanable.dirty.ratio); uncleaned_*: every byte below the active segment not yet
# cleaned, whatever holds it back.
P_CLEANABLE_RATIO = _m("partition_cleanable_ratio", "gauge",
                       "cleanableBytes / (cleanBytes + cleanableBytes), as Kafka's LogCleanerManager computes it: "
                       "the ratio the cleaner compares with min.cleanable.dirty.ratio.", P)
P_MIN_RATIO = _m("partition_min_cleanable_dirty_ratio", "gauge",
                 "The topic's min.cleanable.dirty.ratio (the ratio the cleaner waits for).", P)
P_CLEANABLE_BYTES = _m("partition_cleanable_bytes", "gauge",
                       "Kafka's cleanableBytes: segments from the first dirty offset to the first uncleanable one.", P)
P_UNCLEANED_BYTES = _m("partition_uncleaned_bytes", "gauge",
                       "Bytes below the active segment not yet cleaned, including what min.compaction.lag.ms or an "
                       "open transaction holds back.", P)
P_UNCLEANED_RATIO = _m("partition_uncleaned_ratio", "gauge",
                       "uncleaned bytes / (clean bytes + uncleaned bytes).", P)
P_BLOCKED = _m("partition_compaction_blocked", "gauge",
               "1 when uncleaned bytes are held back from the cleaner, by reason (min_compaction_lag, last_stable_offset).",
               P + ("reason",))
P_CLEAN_BYTES = _m("partition_clean_bytes", "gauge", "Bytes of segments below the first dirty offset (already cleaned).", P)
P_LOG_BYTES = _m("partition_log_bytes", "gauge", "Bytes of all .log segments of the partition.", P)
P_HEAD_BYTES = _m("partition_not_yet_cleanable_bytes", "gauge",
                  "Bytes the cleaner may not touch yet, by what holds them (held_by): active_segment (never "
                  "cleaned until it rolls), min_compaction_lag or last_stable_offset (segments below it from the "
                  "first uncleanable offset on); every held_by is present, 0 when it holds nothing.",
                  P + ("held_by",))
# --- the active segment against its roll settings (LogSegment.shouldRoll, LogConfig.maxSegmentMs) ---
P_ACTIVE_BYTES = _m("partition_active_segment_bytes", "gauge", "Bytes of the active segment's .log file.", P)
P_ACTIVE_AGE = _m("partition_active_segment_age_seconds", "gauge",
                  "Now minus the active segment's first batch's max timestamp, what Kafka compares with "
                  "segment.ms at the next append; absent while the active segment is empty.", P)
P_SEGMENT_BYTES = _m("partition_segment_bytes", "gauge",
                     "The topic's segment.bytes: the active segment rolls once an append would pass it.", P)
P_MAX_SEGMENT_AGE = _m("partition_max_segment_age_seconds", "gauge",
                       "The age at which the active segment rolls, on the next append (LogConfig.maxSegmentMs): "
                       "segment.ms, or max.compaction.lag.ms when lower on a compacted topic.", P)
P_ROLL = _m("partition_active_segment_roll_seconds", "gauge",
            "Seconds until the active segment rolls at the current write rate, by what rolls it (by: segment_ms, "
            "max_compaction_lag_ms, segment_bytes); a time roll needs an append. Absent when it cannot be told: "
            "see partition_active_segment_roll_unknown.", P + ("by",))
P_ROLL_UNKNOWN = _m("partition_active_segment_roll_unknown", "gauge",
                    "1 when the active segment's roll cannot be forecast, with the reason: empty_segment (nothing "
                    "to roll), no_writes (nothing appended since the last refresh: no append, no roll), "
                    "write_rate_unknown, topic_config_unknown (segment.bytes, segment.ms or max.compaction.lag.ms "
                    "not given by the admin API: see topic_config_source_info).", P + ("reason",))
P_ACTIVE_DUP_RECORDS = _m("partition_active_segment_duplicate_records", "gauge",
                          "Records of the active segment superseded by a later record of the same key in it: "
                          "duplicates the cleaner cannot remove until the segment rolls. Absent when the keys "
                          "were not read (see partition_active_segment_duplicates_unknown).", P)
P_ACTIVE_DUP_BYTES = _m("partition_active_segment_duplicate_bytes", "gauge",
                        "Key and value bytes of partition_active_segment_duplicate_records.", P)
P_ACTIVE_DUP_UNKNOWN = _m("partition_active_segment_duplicates_unknown", "gauge",
                          "1 when the active segment's duplicates were not counted, with the reason: over_bound "
                          "(larger than the bytes or keys the collector reads for keys), read_fault (a batch "
                          "unreadable), not_read (the segment went away while read).",
                          P + ("reason",))
# its help (pinned by the goldens) predates reason over_budget (issue 43): log_dir_active_keys_over_budget_partitions
# describes it; the wording changes with this metric next
P_FIRST_DIRTY = _m("partition_first_dirty_offset", "gauge", "First offset not yet cleaned (cleaner-offset-checkpoint).", P)
P_FIRST_UNCLEANABLE = _m("partition_first_uncleanable_offset", "gauge", "First offset the cleaner may not clean yet.", P)
P_LSO = _m("partition_last_stable_offset", "gauge",
           "Last stable offset the model uses: read from the log (first offset of the oldest open transaction, else "
           "the log end), or the leader's when the log could not be read whole (monitor.model.lsocheck).", P)
P_LEADER_LSO = _m("partition_leader_last_stable_offset", "gauge",
                  "The partition leader's last stable offset from the admin API (ListOffsets at READ_COMMITTED); "
                  "broker is the leader's id.", P, owner=CLUSTER)
P_LSO_DISAGREEMENT = _m("partition_last_stable_offset_disagreement_seconds", "gauge",
                        "How long the LSO read from this replica's log and the leader's (admin API) have disagreed "
                        "on the same offset (0 while they agree; absent without the leader's); lso_source is the "
                        "one the model uses: log or admin.", P + ("lso_source",))
P_OPEN_TXNS = _m("partition_open_transactions", "gauge",
                 "Transactions open in the log (a transactional batch of the producer, no COMMIT/ABORT marker yet).", P)
P_OLDEST_TXN_AGE = _m("partition_oldest_open_transaction_age_seconds", "gauge",
                      "Age of the oldest open transaction, from its first batch's timestamp (absent when none is open).", P)
P_HANGING_TXNS = _m("partition_hanging_transactions", "gauge",
                    "Open transactions older than the broker's transaction.max.timeout.ms: the coordinator should "
                    "have aborted them, so they hang (KIP-664) until kafka-transactions.sh abort.", P)
P_END = _m("partition_log_end_offset", "gauge", "Next offset to be written, from the segments.", P)
P_ELIGIBLE = _m("partition_eligible", "gauge", "1 when the cleaner may pick this log now (ratio above threshold, or max lag due).", P)
P_ELIGIBLE_SECONDS = _m("partition_eligible_seconds", "gauge", "How long the log has been eligible without being cleaned.", P)
P_DELAY = _m("partition_compaction_delay_seconds", "gauge", "How far past max.compaction.lag.ms the log is (0 when not overdue).", P)
P_TOMBSTONES = _m("partition_tombstones", "gauge", "Tombstones on disk, in the cleaned and the dirty section.", P + ("section",))
P_OLDEST_TOMBSTONE = _m("partition_oldest_tombstone_age_seconds", "gauge", "Age of the oldest tombstone on disk.", P)
P_RETENTION = _m("partition_delete_retention_seconds", "gauge", "The topic's delete.retention.ms, in seconds.", P)
P_PAST_RETENTION = _m("partition_tombstones_past_retention", "gauge",
                      "Tombstones older than delete.retention.ms still on disk.", P)
P_PAST_HORIZON = _m("partition_tombstones_past_delete_horizon", "gauge",
                    "Tombstones whose batch's delete horizon has passed, still on disk (the cleaner missed them).", P)
P_HORIZON_RECORDS = _m("partition_delete_horizon_records", "gauge",
                       "Tombstones (kind=tombstone) and COMMIT/ABORT transaction markers (kind=marker) on disk by "
                       "their batch's delete horizon (KIP-534, monitor.model.horizon): state=unstamped (no horizon "
                       "yet: a clean stamps a tombstone it keeps, a marker once its transaction's records are gone; "
                       "it goes one delete.retention.ms after that clean at the earliest), pending (stamped, the "
                       "horizon ahead), passed (the next clean removes it). "
                       "Markers are read from batch headers; tombstones only once the records are "
                       "(partition_detail_pending), absent until then. A horizon no clean could have written is "
                       "counted in partition_read_faults, its records in no state.", P + ("kind", "state"))
P_NEXT_HORIZON = _m("partition_next_delete_horizon_timestamp_seconds", "gauge",
                    "Unix time at which the next tombstone or marker still ahead of its delete horizon may go at "
                    "the earliest: the earliest pending horizon, or for unstamped ones one delete.retention.ms "
                    "after a clean starting now, whichever is first (ones past their horizon go at the next "
                    "clean). Absent when there are none, or while the partition's tombstones are unread.", P)
P_UNCLEANABLE = _m("partition_uncleanable", "gauge",
                   "1 while log-cleaner.log says the cleaner marked the partition uncleanable (until the broker "
                   "restarts), with the exception's class.", P + ("exception",))
P_CAUSE = _m("partition_compaction_cause", "gauge",
             "1 for the one cause that best says why the partition is (not) compacting (monitor.verdicts.causes).",
             P + ("cause",))
P_FAULTS = _m("partition_read_faults", "gauge", "Corrupt or unreadable batches met while reading the partition.", P)

# --- cardinality (granularity: topic, the default): the per-partition series every partition has. The
# others go out only for an unhealthy partition (monitor.verdicts.health), or for all with granularity: partition.
# Chosen for what needs them while a partition is healthy:
# * partition_compaction_cause: the health verdict itself, one series (count by (cause) works, the
#   dashboard's row per partition, CleanerDisabled's "this broker hosts compacted partitions");
# * partition_cleanable_ratio: Kafka's own figure, how close each partition is to its
#   min.cleanable.dirty.ratio (the dashboard's heatmap and table);
# * partition_tombstones{section="clean"|"dirty"}: TombstonesPilingUp compares the change over 1h,
#   which needs the series while the partition is still healthy.
# * partition_detail_pending: whether the tombstone series are there yet (a serving collector reads
#   headers first, records after: issue 31); not in collect --once's output, which reads everything.
P_DETAIL_PENDING = _m("partition_detail_pending", "gauge",
                      "1 while the partition's records are still to be read (the collector reads every segment's "
                      "batch headers first, which give its ratio, eligibility and cause, then its records at the "
                      "I/O budget's pace): its record-level series (tombstones, keyless and empty-value records, "
                      "the active segment's duplicates) are absent until then; 0 once read. Absent from collect "
                      "--once, which reads every record before it prints.", P)
PARTITION_DEFAULT = (P_CAUSE, P_CLEANABLE_RATIO, P_TOMBSTONES, P_DETAIL_PENDING)
PARTITION_DEFAULT_SERIES = 4  # P_TOMBSTONES is two series (clean, dirty); +1 P_DETAIL_PENDING when serving

# --- topic aggregates over the partitions of this broker's log dirs (every granularity; Prometheus
# aggregates across brokers: max by (cluster, topic) / sum by (cluster, topic)) ---
TB = ("cluster", "broker", "topic")
T_MAX_CLEANABLE_RATIO = _m("topic_max_cleanable_ratio", "gauge",
                           "Highest partition_cleanable_ratio (Kafka's dirty ratio) of the topic's partitions.", TB)
T_CLEANABLE_BYTES = _m("topic_cleanable_bytes", "gauge",
                       "Sum of partition_cleanable_bytes (Kafka's dirty bytes the cleaner may clean now).", TB)
T_UNCLEANED_BYTES = _m("topic_uncleaned_bytes", "gauge",
                       "Sum of partition_uncleaned_bytes (every byte below the active segment not yet cleaned).", TB)
T_LOG_BYTES = _m("topic_log_bytes", "gauge", "Sum of partition_log_bytes: bytes of all .log segments.", TB)
T_TOMBSTONES = _m("topic_tombstones", "gauge", "Tombstones on disk in the topic's partitions, both sections.", TB)
T_CAUSE = _m("topic_compaction_cause", "gauge",
             "1 for the worst cause of the topic's partitions: the first of monitor.verdicts.causes.PRECEDENCE among them.",
             TB + ("cause",))
T_UNHEALTHY = _m("topic_unhealthy_partitions", "gauge",
                 "Partitions of the topic that are unhealthy (monitor.verdicts.health: a cause beyond the configured "
                 "behaviour, or an alert rule's comparison holds on its series); their every series is exported.",
                 TB)

LOG_DIR_UP = _m("log_dir_up", "gauge",
                "1 when the log dir's files were read and understood; 0 when it cannot be listed, its cleaner or "
                "log-start checkpoint is malformed (its partition series are then withdrawn, not guessed), or a "
                "path given yields no log dir (log_dir_down_info says why); never 1 for a path holding none.",
                B + ("log_dir",))
LOG_DIR_DOWN = _m("log_dir_down_info", "gauge",
                  "1 for each log dir whose log_dir_up is 0, with the reason: not_found (the path given holds no "
                  "Kafka log dir within the walk's depth: monitor.kafka.discovery), partition_dir (a partition "
                  "folder given as a log dir), io (it cannot be listed), meta_properties (its meta.properties "
                  "cannot be read: whose it is is unknown), cluster_conflict (another log dir claims its broker "
                  "with another cluster.id), checkpoint (its cleaner or log-start checkpoint is malformed). The "
                  "collector logs the message, naming the path; `collect --once` prints it.", B + ("log_dir", "reason"))
P_STATE_UNKNOWN = _m("partition_state_unknown", "gauge",
                     "1 when a partition of a log dir that is up has no figures this refresh (its cause is "
                     "unknown), with the reason: segments_changing (a segment moved between listing and reading, "
                     "the cleaner's swap or retention's delete, each time through the re-listings one refresh "
                     "allows), unreadable_file (a segment file that is no regular file or cannot be stat'ed), "
                     "checkpoint_entry (its checkpoint entry cannot be right against its log), read_error (a "
                     "segment that cannot be read), duplicate_dirs (two folders of the broker load as the partition). "
                     "`collect --once` and `logdir` print the message, naming the file.",
                     P + ("reason",))
LOG_DIR_RELISTS = _m("log_dir_partition_relists", "counter",
                     "Partitions the log-dir scanner listed and read again within a refresh because one of their "
                     "files moved between listing and reading (the cleaner's swap, retention's delete), since the "
                     "collector started: the churn it met, not a fault.", B)
# Its help still names the cache by its module's path before collectors/ had rooms (collectors/logdirs/summary_state.py
# now): the rooms move (issue 42) changed no output, the goldens pin that; the wording changes with this metric next.
LOG_DIR_STATE_CACHE_UP = _m("log_dir_state_cache_up", "gauge",
                            "1 when the collector's summary cache for the broker's log dirs (collectors.summary_state, "
                            "in --state-dir) was last written, reason ok; 0 when it cannot be (reason unwritable: a "
                            "read-only or missing state dir, full: no space left, io_error): the figures stand, but "
                            "a restart reads every segment again. Absent without a cache (collect --once).",
                            B + ("reason",))
LOG_DIR_STATE_CACHE_RESTORED = _m("log_dir_state_cache_restored_segments", "gauge",
                                  "Segments whose summaries the collector took from its summary cache at start "
                                  "instead of reading them (their file's inode, size and mtime unchanged since "
                                  "written, or only appended to since: read on from where the cache stopped); a cache "
                                  "of another version, damaged or foreign is discarded (0), said in the log.", B)

# --- issue 31: the log-dir scanner's reads (headers first, records at the I/O budget's pace), per broker;
# a serving collector's only (collect --once reads everything before it prints) ---
LOG_DIR_READ_BYTES = _m("log_dir_read_bytes", "counter",
                        "Bytes the collector read from the broker's log dirs since it started, by pass: header "
                        "(batch headers, a page each: the compaction state) or detail (records: tombstones, keys, "
                        "__consumer_offsets commits). Both are charged to the I/O budget.", B + ("pass",))
LOG_DIR_PENDING_BYTES = _m("log_dir_detail_pending_bytes", "gauge",
                           "Bytes of segments whose records are still to be read (partition_detail_pending).", B)
LOG_DIR_IO_BUDGET = _m("log_dir_io_budget_bytes_per_second", "gauge",
                       "The I/O budget the collector's log-dir reads keep to (io_budget_bytes_per_second, "
                       "--io-budget); absent when unlimited.", B)
LOG_DIR_ACTIVE_KEYS_BYTES = _m("log_dir_active_keys_bytes", "gauge",
                               "Memory the broker's active segments' key sets hold (100 bytes a distinct key: "
                               "monitor.model.activekeys), against timeouts.active_segment_keys_budget_bytes.", B)
LOG_DIR_ACTIVE_KEYS_OVER_BUDGET = _m("log_dir_active_keys_over_budget_partitions", "gauge",
                                     "Partitions whose active segment's duplicates are unknown because its keys "
                                     "would take the key sets past timeouts.active_segment_keys_budget_bytes "
                                     "(partition_active_segment_duplicates_unknown, reason over_budget).", B)
LOG_DIR_INDEX_UNTRUSTED = _m("log_dir_index_untrusted_segments", "gauge",
                             "Rolled segments read by their batch headers because their .index or .timeindex "
                             "cannot be trusted (missing, truncated, not trimmed, older than the .log, or "
                             "disagreeing with it); each is named once in the log. The others are summarised "
                             "from those indexes (issue 43).", B)

# --- issue 16: producer pitfalls on disk and compact,delete retention, per partition (collectors.export.exporter's
# PartitionCollector, with the partition's other series) ---
P_EMPTY_VALUES = _m("partition_empty_value_records", "gauge",
                    "Records on disk whose value is an empty string (length 0, not null): no tombstone, the key "
                    "never goes away.", P)
P_KEYLESS = _m("partition_keyless_records", "gauge",
               "Records on disk without a key (the cleaner cannot compact them).", P)
# Kafka 4.4's max.decompressed.message.bytes (monitor.model.compaction): both only for a topic that sets a
# per-record cap below Kafka's default (at the default no record can exceed it: nothing to compare)
P_DECOMPRESSED_RECORD = _m("partition_max_decompressed_record_bytes", "gauge",
                           "The largest record of a compressed batch in the segments below the active one (what the "
                           "cleaner reads, now or once a hold releases), decompressed, as its length field says: what Kafka 4.4 "
                           "compares with max.decompressed.message.bytes when it cleans. Only for a topic that "
                           "sets that cap below Kafka's default.", P)
P_DECOMPRESSED_LIMIT = _m("partition_max_decompressed_message_bytes", "gauge",
                          "The topic's max.decompressed.message.bytes (Kafka 4.4), where it is set below Kafka's "
                          "default: a larger stored record makes the partition's cleans fail.", P)
P_RETENTION_START = _m("partition_retention_projected_log_start_offset", "gauge",
                       "cleanup.policy=compact,delete: the log start offset after the broker's next retention check "
                       "(UnifiedLog.deleteOldSegments, by retention.bytes and retention.ms).", P)
P_RETENTION_BYTES = _m("partition_retention_deletable_bytes", "gauge",
                       "cleanup.policy=compact,delete: bytes of the segments the next retention check deletes.", P)

# --- from the broker's log-cleaner.log (collectors.logdirs.cleaner_log), per broker ---
CL_THREAD_DEATHS = _m("cleaner_log_thread_deaths", "counter",
                      "Cleaner threads log-cleaner.log says died (\"Error due to\"), since the collector started "
                      "reading it.", B)
CL_LAST_ERROR = _m("cleaner_log_last_thread_error_info", "gauge",
                   "1, labelled with the last cleaner-thread death's thread, exception class and message "
                   "(cut to 200 characters); absent when none died.", B + ("thread", "exception", "message"))
CL_CLEANS = _m("cleaner_log_cleans", "counter", "Cleans log-cleaner.log reported (one stats block each).", B)
CL_PROCESSED = _m("cleaner_log_processed_bytes", "counter",
                  "Bytes of log the cleans processed (Kafka prints MB to 0.1 MB, read as 2^20 bytes).", B)
CL_LAST_THROUGHPUT = _m("cleaner_log_last_clean_throughput_bytes_per_second", "gauge",
                        "The last clean's bytes processed per second (its MB/sec, in bytes).", B)
CL_LAST_BUFFER = _m("cleaner_log_last_clean_buffer_utilization_ratio", "gauge",
                    "The last clean's dedupe buffer utilization, 0..1.", B)
CL_LAST_REDUCTION = _m("cleaner_log_last_clean_size_reduction_ratio", "gauge",
                       "1 - bytes written / bytes read of the last clean, 0..1.", B)
CL_LEARNED = _m("cleaner_log_learned_throughput_bytes_per_second", "gauge",
                "The cleaner's throughput over the recent cleans of 1 MB or more (total MB / total seconds): the "
                "rate the cleaning-time estimate uses; absent until one such clean.", B)

# --- the cleaner's queue, forecast (issue 34; monitor.model.cleanerqueue): Kafka's cleaning loop run forward
# over every compacted partition of the broker's log dirs read here (the dirtiest offered log first, one
# per thread, log.cleaner.backoff.ms when nothing is offered, the shared I/O throttle, the throughput
# learned from log-cleaner.log). A figure that cannot be known is absent, its reason in the _unknown series. ---
P_NEXT_CLEAN = _m("partition_next_clean_forecast_timestamp_seconds", "gauge",
                  "When the partition's next clean is forecast to start (Unix time), from the broker's cleaner "
                  "queue; absent when unknown (partition_next_clean_forecast_unknown says why).", P)
P_NEXT_CLEAN_END = _m("partition_next_clean_forecast_end_timestamp_seconds", "gauge",
                      "When the partition's next clean is forecast to end (Unix time): its start plus its bytes "
                      "over the learned throughput, shared throttle applied.", P)
P_NEXT_CLEAN_LATE = _m("partition_next_clean_forecast_late_seconds", "gauge",
                       "How far past its max.compaction.lag.ms deadline the partition's next clean is forecast to "
                       "start (negative: that much in time); only where the deadline is still ahead (past it, "
                       "partition_compaction_delay_seconds says how overdue).", P)
P_NEXT_CLEAN_UNKNOWN = _m("partition_next_clean_forecast_unknown", "gauge",
                          "1 when the partition's next clean cannot be forecast, with the reason: no_throughput "
                          "(none learned from log-cleaner.log), write_rate_unknown (not eligible, and no rate to "
                          "say when), never_eligible (no writes, no deadline), beyond_horizon (not within 30 days), "
                          "broker_unknown (a setting or another partition's config unknown), uncleanable.",
                          P + ("reason",))
BROKER_BACKLOG_DRAIN = _m("broker_cleaner_backlog_drain_seconds", "gauge",
                          "Seconds until the broker's cleaner has worked off its backlog (every log offered now or "
                          "by bytes already written cleaned, every thread idle), forecast; absent when unknown.", B)
BROKER_BACKLOG_DRAIN_UNKNOWN = _m("broker_cleaner_backlog_drain_unknown", "gauge",
                                  "1 when the backlog's drain time cannot be forecast, with the reason: "
                                  "no_throughput, broker_unknown (a setting, a partition's config or the partition "
                                  "itself unknown), not_caught_up (writes keep the cleaner busy for 30 days).",
                                  B + ("reason",))

_owned_by(CLUSTER)
# --- consumer groups on compacted topics ---
# consumer_group_lag_records, _tombstone_risk and _may_miss_updates go out at granularity topic (the
# default) only for a group's partition on which a rule's comparison holds: see GROUP_DEFAULT below
G_LAG = _m("consumer_group_lag_records", "gauge", "Records between the group's committed offset and the log end.", G)
G_LAG_SECONDS = _m("consumer_group_lag_seconds", "gauge",
                   "Now minus the time the record at the group's committed offset was appended, by method: exact "
                   "(its timestamp, read: needs Read on the topic), interpolated (without Read: when the log end "
                   "offset passed the committed offset, between the collector's log-end-offset samples), "
                   "extrapolated (older than every sample: along their trend). Absent when unknown: see "
                   "consumer_group_lag_seconds_unknown.", G + ("method",))
G_LAG_SECONDS_UNKNOWN = _m("consumer_group_lag_seconds_unknown", "gauge",
                           "1 when a lagging group's time lag cannot be told, with the reason: too_few_samples "
                           "(fewer than two log-end-offset samples yet, and no Read to read the record), "
                           "no_writes_sampled (the log end offset stood still over every sample), record_compacted "
                           "(the record at the committed offset was compacted away, and fewer than two samples "
                           "yet: the next record's age would understate the lag).", G + ("reason",))
G_LAG_UNKNOWN = _m("consumer_group_lag_unknown", "gauge",
                   "1 when a listed group's lag is not (or not wholly) exported this refresh, with the call that "
                   "failed and why: call list_consumer_group_offsets (reason: the error kind, timeout, kafka or "
                   "unauthorized: none of the group's lag is exported), or list_offsets (reason "
                   "end_offset_unknown: the admin source has no log end offset for a partition the group "
                   "committed on, see topic_admin_unknown). Absent for a group whose lag is all there; when "
                   "every group's call fails the source is down instead (source_up 0).",
                   ("cluster", "group", "call", "reason"))
ADMIN_LISTED_GROUPS = _m("admin_listed_groups", "gauge",
                         "Consumer groups ListGroups gives the collector's user (a group without a Describe ACL "
                         "on GROUP is left out, with no error: admin_unlisted_groups counts those with committed "
                         "offsets). Absent while ListGroups answers with an error (a broker that does not answer): "
                         "the list is partial.",
                         ("cluster",))
OFFSETS_TOPIC_GROUPS = _m("offsets_topic_groups", "gauge",
                          "Consumer groups with live committed offsets in the __consumer_offsets partitions of the "
                          "log dirs read, whatever the ACLs (the latest offset commit record of at least one of "
                          "their partitions is not a tombstone). Only the __consumer_offsets partitions with a "
                          "replica in those log dirs count; absent when none has one (then it cannot be known).",
                          ("cluster",))
ADMIN_UNLISTED_GROUPS = _m("admin_unlisted_groups", "gauge",
                           "Consumer groups with live committed offsets in __consumer_offsets (offsets_topic_groups) "
                           "that ListGroups does not give the collector's user: hidden by a missing Describe ACL "
                           "on GROUP, their lag is not exported. Absent when either side is unknown.",
                           ("cluster",))
# the cluster's figures that need the log dirs too: a collector in role all makes them; split in two roles
# neither side knows both (the cluster role has no __consumer_offsets on disk, a broker-role collector only
# its own partitions of it), so they are absent there: unknown, never a count of part of the cluster
NEEDS_ALL_ROLE = (OFFSETS_TOPIC_GROUPS, ADMIN_UNLISTED_GROUPS)
G_RETENTION_FRACTION = _m("consumer_group_lag_retention_ratio", "gauge",
                          "Time lag / delete.retention.ms: at 1 the group may miss tombstones.", G)
G_MAY_MISS = _m("consumer_group_may_miss_updates", "gauge",
                "1 when the group may read an already compacted history and miss intermediate updates, by reason: "
                "lag_past_min_compaction_lag (time lag > the topic's min.compaction.lag.ms and, when the "
                "leader's log dirs are in the same collector, committed offset < the leader's cleaner limit, the "
                "lower of its active segment base offset and last stable offset, since Kafka never cleans the "
                "active segment nor past the LSO; without them the time lag alone), "
                "below_first_dirty_offset (committed offset < the leader's first dirty offset; needs the "
                "leader's log dirs in the same collector); 0 when not; absent when unknown. "
                "latest_value_only=\"true\" for groups declared in latest_value_only_groups.",
                G + ("reason", "latest_value_only"), owner=BROKER)  # judged against the leader's replica: the
# broker-role collector reading the leader's log dirs exports it (once: a partition has one leader)
G_AT_RISK = _m("consumer_group_tombstone_risk", "gauge",
               "1 when the group's time lag exceeds the topic's delete.retention.ms.", G)

# --- cardinality of the consumer groups (granularity: topic, the default): the series every (group, topic,
# partition) has. The others go out only where a rule's comparison holds on them (monitor.verdicts.health.series_fire:
# ConsumerMayMissTombstones, ConsumerMayMissUpdates), or for all with granularity: partition. Chosen for
# what needs them while the group's partition is healthy:
# * consumer_group_lag_retention_ratio: what ConsumerMayMissTombstones compares, drawn per partition by
#   the dashboards (Grafana's lag panel, the Streamlit tombstones page's risk chart);
# * consumer_group_lag_seconds{method}: the time lag itself (Grafana's time-lag panel, the groups table);
# * consumer_group_lag_seconds_unknown{reason}: in place of the time lag when it cannot be told (never
#   the two together): an unknown is never cut.
GROUP_DEFAULT = (G_RETENTION_FRACTION, G_LAG_SECONDS, G_LAG_SECONDS_UNKNOWN)
GROUP_DEFAULT_SERIES = 2  # lag_seconds or lag_seconds_unknown, and the ratio (absent when the lag is unknown)

# --- consumer-group aggregates over a topic's partitions (every granularity), per group ---
GT = ("cluster", "group", "topic")
GT_MAX_LAG_SECONDS = _m("consumer_group_topic_max_lag_seconds", "gauge",
                        "Highest consumer_group_lag_seconds of the group over the topic's partitions whose time "
                        "lag is known (absent when none is).", GT)
GT_MAX_RETENTION_FRACTION = _m("consumer_group_topic_max_lag_retention_ratio", "gauge",
                               "Highest consumer_group_lag_retention_ratio of the group over the topic's "
                               "partitions (absent when no time lag is known).", GT)
GT_LAG = _m("consumer_group_topic_lag_records", "gauge",
            "Sum of consumer_group_lag_records over the partitions the group committed an offset for.", GT)
GT_UNHEALTHY = _m("consumer_group_topic_unhealthy_partitions", "gauge",
                  "The group's partitions of the topic on which an alert rule's comparison holds "
                  "(monitor.verdicts.health): their every series is exported.", GT)
GT_LAG_UNKNOWN = _m("consumer_group_topic_lag_seconds_unknown_partitions", "gauge",
                    "The group's partitions of the topic whose time lag cannot be told "
                    "(consumer_group_lag_seconds_unknown).", GT)

# --- topic configs (admin API) ---
T = ("cluster", "topic")
T_MIN_RATIO = _m("topic_min_cleanable_dirty_ratio", "gauge", "min.cleanable.dirty.ratio of a compacted topic.", T)
T_RETENTION = _m("topic_delete_retention_seconds", "gauge", "delete.retention.ms of a compacted topic, in seconds.", T)
T_MIN_LAG = _m("topic_min_compaction_lag_seconds", "gauge", "min.compaction.lag.ms of a compacted topic, in seconds.", T)
T_MAX_LAG = _m("topic_max_compaction_lag_seconds", "gauge", "max.compaction.lag.ms of a compacted topic, in seconds.", T)
T_SEGMENT_BYTES = _m("topic_segment_bytes", "gauge", "segment.bytes of a compacted topic.", T)
T_SEGMENT_SECONDS = _m("topic_segment_seconds", "gauge", "segment.ms of a compacted topic, in seconds.", T)
T_CONFIG_FINDING = _m("topic_config_finding", "gauge",
                      "1 for each pitfall the configuration review (topics lint) finds on a compacted topic: "
                      "check, the setting to change, its current and suggested value.",
                      T + ("check", "setting", "current", "suggested"))
T_CONFIG_NOT_RUN = _m("topic_config_check_not_run", "gauge",
                      "1 for each check of the configuration review (topics lint) not run on a compacted topic, "
                      "with the input it lacks (needs: live_config, consumer_group_lag or log_dir, as topics "
                      "lint's not_run): the check neither passed nor found anything there.",
                      T + ("check", "needs"))
T_PARTITIONS = _m("topic_partitions", "gauge", "Partitions of a compacted topic.", T)
T_CONFIG_SOURCE = _m("topic_config_source_info", "gauge",
                     "1 for each compacted topic in the log dirs, with where its config came from (source: admin, "
                     "config for monitor.yaml, command-line, default for Kafka's defaults when no admin API is "
                     "configured, unknown when the admin API was asked and did not tell and nothing else gave a "
                     "value) and, when any value is unknown, why "
                     "(reason: not_listed: the admin API does not list the topic, no Describe ACL; "
                     "describe_configs_refused: no DescribeConfigs ACL; admin_unavailable: the admin source is "
                     "down). A config value that is unknown is not exported, nor is any verdict made from it.",
                     T + ("source", "reason"), owner=BROKER)  # of the log dirs' topics: see T_STREAMS_INFO
T_ADMIN_UNKNOWN = _m("topic_admin_unknown", "gauge",
                     "1 for a topic the admin API was asked about and did not answer for this refresh, with the "
                     "call and why: call describe_configs (its config, and whether it is compacted, are unknown) "
                     "or list_offsets (some of its partitions' offsets are unknown, so are the consumer groups' "
                     "lags on them); reason: the error kind (timeout, kafka, unauthorized). When every call of a "
                     "kind fails the admin source is down instead (source_up 0).", T + ("call", "reason"))
ADMIN_LISTED = _m("admin_listed_topics", "gauge",
                  "Topics the admin API lists to the collector's user (every topic, compacted or not; a topic "
                  "without a Describe ACL is not listed). 0 while the log dirs hold compacted partitions: the "
                  "user lacks Describe on the topics.", ("cluster",))

_owned_by(BOTH)
# --- the collector itself ---
S = ("cluster", "source", "kind")
SRC_UP = _m("source_up", "gauge", "1 when the source's last refresh succeeded.", S)
SRC_LAST_SUCCESS = _m("source_last_success_timestamp_seconds", "gauge", "Unix time of the last successful refresh.", S)
SRC_DURATION = _m("source_refresh_duration_seconds", "gauge", "How long the last refresh took.", S)
SRC_ERRORS = _m("source_errors", "counter", "Refresh errors by source and error kind.", S + ("error",))
SRC_LAST_ERROR = _m("source_last_error_info", "gauge",
                    "1, labelled with the source's last error: its kind (error, as source_errors_total's) and its "
                    "text (message, secrets redacted, cut to 200 characters); a failed refresh's, or a failed "
                    "part's of a refresh that succeeded. Kept after the source recovers; absent until a first "
                    "error.", S + ("error", "message"))
SRC_SHAPE = _m("source_shape_info", "gauge",
               "1 for the shape a JMX exporter or Jolokia source's cleaner gauges were read in (shape: rule_named, "
               "catch_all, jolokia); also_on_page: other shapes the same page carried, not used (comma-separated).",
               S + ("shape", "also_on_page"))

_owned_by(BROKER)
# --- disk and restore (#16 point 6): Kafka's temporary files left behind ---
P_LEFTOVER_FILES = _m("partition_leftover_files", "gauge",
                      "Kafka's temporary files (kind: cleaned, swap, deleted; LogFileUtils' suffixes) in the "
                      "partition's folder untouched (inode change time) for longer than file.delete.delay.ms: a "
                      "clean or delayed delete that did not finish. The broker removes or completes them on start.",
                      P + ("log_dir", "kind"))

# --- disk and restore (#16 point 6): room for the cleaner's next write (monitor.model.diskspace) ---
LD = B + ("log_dir",)
LOG_DIR_FREE = _m("log_dir_free_bytes", "gauge",
                  "Free bytes of the log dir's filesystem available to an unprivileged user (statvfs f_bavail * "
                  "f_frsize, as df shows); absent when it cannot be read (log_dir_free_space_check_up 0).", LD)
LOG_DIR_CLEAN_NEEDED = _m("log_dir_clean_needed_bytes", "gauge",
                          "Bytes the cleaner's next clean of a compacted partition of this log dir writes before it "
                          "can swap: the largest group of segments LogCleaner.groupSegmentsBySize makes (up to "
                          "segment.bytes, or one larger segment), largest over the log dir's partitions; absent "
                          "when none has a segment below its active one.", LD)
LOG_DIR_FREE_UP = _m("log_dir_free_space_check_up", "gauge",
                     "1 when the log dir's filesystem free space was read; 0 when statvfs failed (the reason is "
                     "in the collector's log and `logdir`'s output).", LD)

# --- disk and restore (#16 point 6): Kafka Streams internal topics, by name (monitor.model.streams) ---
# an info metric per topic rather than a label on every partition series: one series per Streams topic
# per (cluster, topic) with no broker label, yet from the log dirs: in the broker role the collector reading the
# leader of the topic's lowest partition (the admin snapshot's) exports it, so one of N does
T_STREAMS_INFO = _m("topic_streams_info", "gauge",
                    "1 for a topic Kafka Streams names as an internal topic: streams_role changelog "
                    "(<application.id>-<store>-changelog, a state store's restore source) or repartition "
                    "(<application.id>-<name>-repartition); recognised by name only.", T + ("streams_role",))

# --- #14 point 1: each replica's role, from the admin source's metadata (an info series joined in PromQL,
# not a role label on every partition series); the rule ReplicasDisagree counts a partition's replicas here ---
P_REPLICA_INFO = _m("partition_replica_info", "gauge",
                    "1 for each replica of a compacted partition the metadata lists, role leader or follower: each "
                    "broker cleans its own copy (LogCleaner runs per broker), so replicas of one partition can "
                    "disagree. Join on (cluster, broker, topic, partition) to split a partition series by role.",
                    P + ("role",), owner=CLUSTER)

# --- #34 part 1: replica safety (monitor.model.replicasafety): each replica of a compacted partition out of
# the ISR (or offline), from the admin source's metadata across refreshes (collectors.admin.replicas),
# against the topic's delete.retention.ms and its broker's producer.id.expiration.ms. Only the replicas out
# now have series (absent: in sync). lower_bound="true": already out when the collector first saw the
# partition, so out at least this long; offline="true": its broker is not in the metadata's broker list. ---
_owned_by(CLUSTER)
RS = P + ("lower_bound", "offline")
P_REPLICA_OUT_SECONDS = _m("replica_out_of_sync_seconds", "gauge",
                           "Seconds since the collector's first refresh that found the replica out of the "
                           "partition's ISR (lower_bound=\"true\": it was out before the collector first looked, "
                           "so at least this long).", RS)
P_REPLICA_OUT_RATIO = _m("replica_out_of_sync_delete_retention_ratio", "gauge",
                         "replica_out_of_sync_seconds / the topic's delete.retention.ms: from 1 on, tombstones "
                         "written after the replica fell out may be cleaned away on the leader before it "
                         "fetches them, and their keys stay alive on this replica.", RS)
P_REPLICA_OUT_PID_RATIO = _m("replica_out_of_sync_producer_id_expiration_ratio", "gauge",
                             "replica_out_of_sync_seconds / its broker's producer.id.expiration.ms: from 1 on, "
                             "transaction markers it missed may be gone with its producer state (aborted data "
                             "read as committed, a stuck last stable offset). Absent when the broker did not "
                             "describe the setting.", RS)


# --- stability (kube-state-metrics' two levels). Stable: what the shipped alert rules (monitor/contract/rules.py)
# and the Grafana dashboard (monitor/contract/panels.py) query -- what users copy into their own Prometheus and
# Grafana and keep across upgrades, so a rename would silently break them (a test checks the rules and panels
# query stable families only) -- and the collector's own health every exporter is watched by (up, last
# success, errors). Everything else is experimental: diagnostic figures, forecasts, reasons whose labels may
# still be refined. A stable family's name, type and labels are pinned in tests/collectors/export/stable_metrics.txt;
# changing one takes a deprecation cycle: export the new family beside the old one (experimental, or stable
# with its own line), say "Deprecated: use <new>" in the old one's help for at least one minor release and in
# CHANGELOG.md, then remove the old one and its line. ---
STABLE_LEVEL, EXPERIMENTAL_LEVEL = "stable", "experimental"
STABLE = frozenset((
    # the broker's log cleaner, as JMX tells it, and its settings
    BROKER_DIRTY_RATIO, BROKER_SINCE_LAST_RUN, BROKER_CLEAN_TIME, BROKER_BUFFER, BROKER_RECOPY, BROKER_DELAY,
    BROKER_DEAD, BROKER_CLEANER_IO, BROKER_UNCLEANABLE_PARTS, BROKER_UNCLEANABLE_BYTES, BROKER_CLEANER_ENABLED,
    BROKER_CLEANER_THREADS, BROKER_CLEANER_IO_MAX,
    # per partition: Kafka's ratio, the verdict, what the compaction alerts compare
    P_CLEANABLE_RATIO, P_MIN_RATIO, P_OLDEST_TXN_AGE, P_HANGING_TXNS, P_ELIGIBLE, P_DELAY, P_TOMBSTONES,
    P_PAST_HORIZON, P_UNCLEANABLE, P_CAUSE, P_NEXT_CLEAN_LATE, P_REPLICA_INFO, P_REPLICA_OUT_RATIO,
    P_REPLICA_OUT_PID_RATIO, P_DECOMPRESSED_RECORD, P_DECOMPRESSED_LIMIT,
    # log dirs
    LOG_DIR_UP, LOG_DIR_FREE, LOG_DIR_CLEAN_NEEDED,
    # consumer groups and topics
    G_LAG_SECONDS, G_RETENTION_FRACTION, G_MAY_MISS, GT_MAX_LAG_SECONDS, GT_LAG, GT_UNHEALTHY, GT_LAG_UNKNOWN,
    ADMIN_LISTED_GROUPS, OFFSETS_TOPIC_GROUPS, ADMIN_UNLISTED_GROUPS, T_MIN_RATIO, T_RETENTION,
    # the collector's own health
    SRC_UP, SRC_LAST_SUCCESS, SRC_ERRORS,
))


def stability(name: str) -> str:
    """A family's stability: ``stable`` when ``STABLE`` lists it, else ``experimental`` (a function, not a table
    made here, so that a family declared below this still has one)."""
    assert name in METRICS, name
    return STABLE_LEVEL if name in STABLE else EXPERIMENTAL_LEVEL
