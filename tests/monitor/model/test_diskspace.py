"""The room a clean needs: LogCleaner.groupSegmentsBySize's greedy grouping (a group grows while its
summed .log sizes stay <= segment.bytes; a segment larger than that is a group alone), the largest group
kept. Kafka's own grouping is checked against a real broker's clean in tests/collectors/test_diskspace_kafka.py."""

import pytest

from monitor.model.diskspace import CleanNeed, LogDirSpace, largest_clean_group


@pytest.mark.parametrize("sizes, segment_bytes, largest", [
    ([], 1000, 0),
    ([0], 1000, 0),
    ([400, 400, 400, 400, 400], 1000, 800),  # groups 400+400, 400+400, 400
    ([600, 400, 1], 1000, 1000),  # 600+400 fits exactly (<=); 1 starts a new group
    ([1500, 100, 100], 1000, 1500),  # larger than segment.bytes: a group of its own
    ([100, 1500, 100], 1000, 1500),
    ([300, 800, 300, 300], 1000, 800),  # 300+800 > 1000: groups 300, 800, 300+300
])
def test_largest_group_as_kafka_groups_segments(sizes, segment_bytes, largest):
    assert largest_clean_group(sizes, segment_bytes) == largest


def test_room_is_unknown_when_either_side_is():
    need = CleanNeed(100, "t", 0)
    assert LogDirSpace("/d", 99, need).room_for_clean is False
    assert LogDirSpace("/d", 100, need).room_for_clean is True
    assert LogDirSpace("/d", None, need, "/d: no").room_for_clean is None
    assert LogDirSpace("/d", 5, None).room_for_clean is None
