"""Partitions built from real segment files for the verdicts' tests (tests/monitor/verdicts/): batches written by
kafka-python's record builders (recordfixtures), read back by the summarizer, folded by the compaction model.
Shared by the tests of the causes, their forecasts and their fixes, which each build the same layouts."""

from __future__ import annotations

import os

from monitor.model.compaction import partition_state
from monitor.model.summary import summarize
from monitor.model.topicconfig import TopicConfig, effective_config
from monitor.verdicts.facts import segment_file
from recordfixtures import T0, control, items, v2, write

STEP = 7  # ms between records' timestamps (recordfixtures.items)
COMPACT = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.5)


def batch_max_ts(first, last):
    return T0 + (last - 1) * STEP  # the batch's max timestamp: its last record's create time


def build(tmp_path, layout, cfg=COMPACT, now=T0 + 10_000, checkpoint=None, **state_kw):
    """``layout``: one list of batches per segment (the last is the active one). Returns the state,
    the effective config and the segments' files. ``state_kw`` go to ``partition_state``."""
    folder = tmp_path / "t-0"
    sums = []
    for batches in layout:
        base = batches[0].records[0].offset if batches and batches[0].records else sums[-1].next_offset
        seg = write(folder / segment_file(base), batches)
        sums.append(summarize(seg.path, base)[0])
    state = partition_state("t", 0, sums, cfg, now, checkpoint=checkpoint, **state_kw)
    return state, effective_config("t", admin=cfg), sums


def plain(lo, hi):
    return [v2(items(range(lo, hi)))]


def txn_layout(pid=7, committed=False):
    data = v2(items(range(20, 30)), producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True)
    after = [control(30, "COMMIT", pid, 0, T0 + 30 * STEP)] if committed else []
    return [plain(0, 20), [data, *after], plain(31 if committed else 30, 60), plain(60 if committed else 60, 61)]


def file_size(summary) -> int:
    return os.path.getsize(summary.path)
