"""What the next clean leaves of a partition, and what is left once it settles: the audit's two projections.

The segments path counts them (``projection_method`` ``counted``): ``monitor.model.nextclean`` runs Kafka's
cleaner over the partition's own files, re-encoding the records each batch keeps as
``MemoryRecords.filterTo`` writes them, with the KIP-534 delete horizon on each tombstone and marker. Its
offset map is built from the batches the task's record pass decodes for the key fold (the same read), its
second pass reads the batch headers, inside the same Spark task: still one task per partition, a handful
of rows out.

The records path (kafka-dump-log dumps, a live topic) has no batch bytes to re-encode: a dump prints
each record's sizes but not its batch's compressed bytes, a topic read through a consumer neither.
Its next-clean figure stays the key fold's byte-share estimate (bytes less the shares of the
records a clean drops), labelled ``estimated``: it is the only figure such an input can give, it is
what those audits always reported, and the label keeps it from passing for a count. Its settled
figure is unknown (null, with the reason): the estimate already ignores the delete horizon, so a
second estimated figure would only repeat it under another name.

The producers' last batches (Kafka's ``lastRecordsOfActiveProducers``) come from the batch headers
(``last_records``): a clean keeps an active producer's last batch even when it empties it (KAFKA-17076).
"""

from __future__ import annotations

from monitor.model.horizon import STATES

# Kafka's producer.id.expiration.ms default (a broker config the audit is not given): a producer whose
# last batch is older and has no open transaction is no longer active (ProducerStateManager.isProducerExpired)
PRODUCER_ID_EXPIRATION_MS = 86_400_000

COUNTED, ESTIMATED = "counted", "estimated"
KINDS = ("tombstone", "marker")
HORIZON_COLUMNS = [f"{kind}s_{state}" for kind in KINDS for state in STATES]
NOT_COUNTED = ("settled size not counted: the input ({kind}) has records, not the batches' bytes a clean "
               "rewrites; the next-clean figure is the byte-share estimate")


class Producers:
    """Each producer's last entry as Kafka's ProducerStateManager holds it after appending the log's
    batches in order (``ProducerStateEntry``): its last data offset, epoch, last timestamp and whether a
    transaction is open. A batch with a new epoch clears the entry's batches (``maybeUpdateProducerEpoch``),
    so a producer whose last entry is a marker of a bumped epoch has no last data offset; an empty
    control batch (its transaction cleaned away) changes nothing."""

    def __init__(self):
        self.entries: dict[int, list] = {}  # producer id -> [last data offset | None, epoch, last ts, open txn]

    def add(self, b) -> None:
        if b.producer_id < 0 or (b.is_control and not b.records_count):
            return
        e = self.entries.setdefault(b.producer_id, [None, b.producer_epoch, -1, False])
        if e[1] != b.producer_epoch:
            e[0], e[1] = None, b.producer_epoch
        e[2] = b.max_timestamp
        if b.is_control:
            e[3] = False
        else:
            e[0] = b.last_offset
            e[3] = e[3] or b.is_transactional

    def last_records(self, now_ms: int, expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> dict:
        """producer id -> (last data offset or None, epoch) of the active producers."""
        return {pid: (off, epoch) for pid, (off, epoch, ts, open_txn) in self.entries.items()
                if open_txn or now_ms - ts < expiration_ms}


def counted(p) -> dict:
    """The partition facts of a ``monitor.model.nextclean.Projection``. An unknown one has no sizes nor
    batch counts; its horizon states are still counted when the files could be read (every batch's
    header), but an unknown projection with no count at all cannot tell none from unread: null then."""
    counts = {f"{kind}s_{state}": int(p.horizon_counts.get((kind, state), 0)) for kind in KINDS for state in STATES}
    if p.unknown_reason is not None:
        known = bool(p.horizon_counts)
        return {**unknown(p.unknown_reason), **(counts if known else {}),
                "next_removable_ms": p.next_removable_ms if known else None}
    return {"next_clean_bytes": p.next_clean_bytes, "settled_bytes": p.settled_bytes,
            "projection_method": COUNTED, "projection_unknown_reason": p.unknown_reason,
            "projected_removable_records": p.removable_records, "batches_dropped": p.batches_dropped,
            "batches_rewritten": p.batches_rewritten, "batches_stamped": p.batches_stamped,
            "next_removable_ms": p.next_removable_ms, **counts}


def unknown(reason: str) -> dict:
    """The facts of a partition whose projection could not be made (a read fault, no segment left)."""
    return {"projection_method": COUNTED, "projection_unknown_reason": reason}


def estimated(kind: str) -> dict:
    """The facts of a records-path partition (see the module's docstring): its next-clean figure is
    made by the table builder from the fold's byte shares."""
    return {"projection_method": ESTIMATED, "projection_unknown_reason": NOT_COUNTED.format(kind=kind)}
