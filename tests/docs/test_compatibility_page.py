"""docs/compatibility.md against what it describes: its table of versions tested is the launcher's
(localkafka.jars.SUPPORTED_VERSIONS, each in its family's mode), the versions ``broker start --kafka-version``
takes are named where the page says what the flag does, and each 4.x change to compaction the monitor
reads has its row (issue 44)."""

from __future__ import annotations

import re
from pathlib import Path

from localkafka.jars import KRAFT, SUPPORTED_VERSIONS, ZOOKEEPER, ZOOKEEPER_VERSION, family

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "compatibility.md").read_text()


def _section(title: str) -> str:
    return PAGE.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_versions_table_is_the_launcher_s():
    rows = re.findall(r"^\| (\d+\.\d+\.\d+) \| (\w+)", _section("Versions tested"), re.M)
    assert [v for v, _ in rows] == list(SUPPORTED_VERSIONS)
    assert all(mode == {ZOOKEEPER: "ZooKeeper", KRAFT: "KRaft"}[family(v)] for v, mode in rows), rows


def test_what_kafka_version_does_names_every_version_it_takes():
    said = _section("Running one of them: `broker start --kafka-version`")
    assert all(f"`{v}`" in said or f"--kafka-version {v}" in said for v in SUPPORTED_VERSIONS), said
    assert f"ZooKeeper node ({ZOOKEEPER_VERSION}" in said and "refused" in said


def test_each_4x_change_to_compaction_has_its_row():
    differs = _section("What differs by version")
    for what in ("`cleanup.policy`", "`max.decompressed.message.bytes`", "`log.cleaner.enable`", "(KAFKA-17076)"):
        assert re.search(rf"^\| [^|]*{re.escape(what)}", differs, re.M), what
    assert "KIP-1161" in differs and "neither compacted nor deleted" in differs
    assert "## Not yet covered" not in PAGE
