"""The collector's write rate for the forecast: bytes appended between two refreshes of a log dir, on
real segment files (tests/recordfixtures.py) and a clock the test sets; the expected bytes are the
appended batches' lengths."""

from __future__ import annotations

import pytest

from collectors.logdirs import LogDirScanner
from monitor.checkpoint import format_checkpoint
from monitor.topicconfig import effective_config
from recordfixtures import items, v2, write


def test_rate_is_the_bytes_appended_between_refreshes(tmp_path):
    folder = tmp_path / "t-0"
    write(folder / "00000000000000000000.log", [v2(items(range(0, 20)))])
    first = [v2(items(range(20, 30)))]
    write(folder / "00000000000000000020.log", first)
    (tmp_path / "cleaner-offset-checkpoint").write_text(format_checkpoint({("t", 0): 20}))
    now = [1000.0]
    scanner = LogDirScanner([tmp_path], lambda t, c: effective_config(t, compacted=True), clock=lambda: now[0])
    [rep] = scanner.refresh().partitions
    assert rep.write_rate.bytes_per_second is None and "no previous refresh" in rep.write_rate.basis
    grown = [v2(items(range(30, 35)))]
    rolled = [v2(items(range(35, 50)))]
    with open(folder / "00000000000000000020.log", "ab") as fh:  # the active segment grows, then rolls
        fh.write(grown[0].data)
    write(folder / "00000000000000000035.log", rolled)
    now[0] = 1010.0
    [rep] = scanner.refresh().partitions
    appended = len(grown[0].data) + len(rolled[0].data)
    assert rep.write_rate.bytes_per_second == pytest.approx(appended / 10)
    # the cause's forecast uses the measured rate, not the one-shot estimate
    c = rep.cause(now[0])
    assert c.forecast["write_rate_bytes_per_second"] == pytest.approx(appended / 10)
    assert c.forecast["write_rate_basis"].startswith("measured")
