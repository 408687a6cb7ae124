"""The producers' last batches the audit hands the cleaner's projection (``spark_analysis.projection.Producers``),
Kafka's ``lastRecordsOfActiveProducers``: from the batch headers as ProducerStateManager appends them."""

from __future__ import annotations

from recordfixtures import Rec, T0, control, v2, write
from spark_analysis.partition_audit import scan_headers
from spark_analysis.projection import PRODUCER_ID_EXPIRATION_MS

HOUR = 3_600_000


def test_last_records_follow_kafkas_producer_state(tmp_path):
    """Producer 7 writes data at epoch 0, then its transaction is aborted with a bumped epoch (InitProducerId
    fences it): the marker's new epoch clears its batches (``maybeUpdateProducerEpoch``), so its last record
    has no data offset. Producer 8's last entry is its data at offset 5 (a commit marker of its own epoch
    keeps it). Producer 9 wrote long ago and no transaction is open: expired, not active. Producer 10 wrote
    as long ago in a transaction still open: active. A batch without a producer id is no producer's."""
    old = T0 - PRODUCER_ID_EXPIRATION_MS - HOUR
    txn = dict(base_sequence=0, transactional=True)
    seg = write(tmp_path / f"{0:020d}.log", [
        v2([Rec(0, old, b"a", b"1")], producer_id=9, producer_epoch=0, base_sequence=0),
        v2([Rec(1, old, b"b", b"1")], producer_id=10, producer_epoch=3, **txn),
        v2([Rec(2, T0, b"c", b"1"), Rec(3, T0, b"d", b"1")], producer_id=7, producer_epoch=0, **txn),
        v2([Rec(4, T0, b"e", b"1"), Rec(5, T0, b"f", b"1")], producer_id=8, producer_epoch=2, **txn),
        control(6, "ABORT", 7, 1, T0 + 10),
        control(7, "COMMIT", 8, 2, T0 + 10),
        v2([Rec(8, T0, b"g", b"1")])])
    scan = scan_headers([(str(seg.path), seg.path.stat().st_size)], lambda u: open(u, "rb"))
    assert scan.producers.last_records(T0 + HOUR) == {7: (None, 1), 8: (5, 2), 10: (1, 3)}
    # a day after producer 7's and 8's last entries, they are no longer active either
    assert scan.producers.last_records(T0 + 10 + PRODUCER_ID_EXPIRATION_MS) == {10: (1, 3)}


def test_a_partition_whose_batch_is_damaged_has_its_projection_unknown_with_the_file_named(tmp_path):
    """A bit flipped inside a batch's records (its CRC no longer matches): Kafka's cleaner stops on such a
    batch, so neither projection is a figure; the partition's facts say why, naming the file, and the
    record pass still reports the fault. Nothing is guessed: the sizes are null, the method still counted."""
    import pyarrow as pa

    from monitor.model.topicconfig import TopicConfig
    from recordfixtures import items
    from spark_analysis.partition_audit import PartitionTask, audit_partition
    from spark_analysis.rows import rows_of

    path = tmp_path / "t-0" / f"{0:020d}.log"
    seg = write(path, [v2(items(range(0, 4))), v2(items(range(4, 8))), v2([Rec(8, T0, b"k0", None)])])
    data = bytearray(path.read_bytes())
    data[len(seg.batches[0].data) + 70] ^= 0x01  # inside the second batch's first record
    path.write_bytes(bytes(data))
    task = PartitionTask("t", 0, [(str(path), len(data))], TopicConfig.from_strings({"cleanup.policy": "compact"}),
                         T0 + HOUR)
    table = pa.Table.from_batches(list(audit_partition(task, lambda u: open(u, "rb"))))
    [facts] = rows_of(table, "facts")
    assert (facts["next_clean_bytes"], facts["settled_bytes"], facts["projection_method"]) == (None, None, "counted")
    assert str(path) in facts["projection_unknown_reason"], facts["projection_unknown_reason"]
    assert rows_of(table, "fault")  # the record pass names the damaged batch as ever
