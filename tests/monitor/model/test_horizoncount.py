"""Tombstones and transaction markers per delete-horizon state (monitor.model.horizoncount), on segments
built byte for byte as a broker stores them (tests/horizonfixtures.py). The broker's own stamps are compared
in tests/collectors/test_delete_horizons_kafka.py."""

from __future__ import annotations

from horizonfixtures import CFG, DAY, NOW, segment, state_of, stamped, tombs
from monitor.model import horizon as hz
from monitor.model.summary import scan_headers, summarize
from recordfixtures import T0, control, write


def test_each_state_counted_and_the_next_removal_is_the_earliest_pending_horizon(tmp_path):
    seg = segment(tmp_path)
    st = state_of([summarize(seg.path, 0)[0]])
    assert st.delete_horizon_records == {"tombstone": {"unstamped": 2, "pending": 3, "passed": 1},
                                         "marker": {"unstamped": 1, "pending": 1, "passed": 1}}
    assert st.tombstones_past_delete_horizon == 1 and st.tombstones == 6
    assert st.next_delete_horizon_ms == NOW + 2_000  # the ABORT marker's, before the tombstones' NOW + 5 s
    assert st.faults == 0 and st.horizon_faults == ()


def test_unstamped_ones_go_one_delete_retention_after_the_next_clean(tmp_path):
    seg = write(tmp_path / "00000000000000000000.log", [tombs(0, 6), control(6, "COMMIT", 7, 0, T0)])
    st = state_of([summarize(seg.path, 0)[0]])
    assert st.next_delete_horizon_ms == hz.earliest_removal_ms(None, NOW, DAY) == NOW + DAY


def test_headers_first_knows_the_markers_and_leaves_tombstones_unknown(tmp_path):
    seg = segment(tmp_path)
    st = state_of([scan_headers(seg.path, 0)[0]])
    assert st.delete_horizon_records["tombstone"] is None  # unknown until the records are read, never 0
    assert st.delete_horizon_records["marker"] == {"unstamped": 1, "pending": 1, "passed": 1}
    assert st.next_delete_horizon_ms is None  # a tombstone may go first: not known


def test_a_horizon_no_clean_could_write_is_a_fault_naming_file_and_byte(tmp_path):
    seg = segment(tmp_path, far=True)
    st = state_of([summarize(seg.path, 0)[0]])
    assert st.delete_horizon_records["tombstone"] == {"unstamped": 2, "pending": 3, "passed": 1}  # its 2 in none
    assert st.tombstones == 8 and st.faults == 1
    (fault,) = st.horizon_faults
    assert fault.startswith(f"{seg.path}: batch at byte {seg.positions[-1]}: delete horizon ")
    assert "no clean could have set it" in fault
    assert st.next_delete_horizon_ms == NOW + 2_000


def test_a_horizon_before_the_batch_records_is_a_fault(tmp_path):
    w = stamped(tombs(0, 3), T0 - 2 * hz.TIMESTAMP_AFTER_MAX_MS)
    seg = write(tmp_path / "00000000000000000000.log", [w])
    s = summarize(seg.path, 0)[0]
    st = state_of([s])
    # the reader rejects it (monitor.kafka.record.horizon.problem): a read fault naming file and byte
    assert st.tombstones_past_delete_horizon == 0 and st.faults == 1
    assert "byte 0: delete horizon" in s.faults[0] and "lies before the batch's records" in s.faults[0]
