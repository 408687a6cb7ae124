"""Kafka's naming rules (``monitor.kafka.kafkanames``), against Kafka's own parsing code run from its jars:
``LocalLog.parseTopicPartitionName`` (what ``LogManager`` loads a folder as) and
``LogFileUtils.offsetFromFileName`` / ``filenamePrefixFromOffset`` (a file name is a segment or
snapshot only when the 20-digit name Kafka makes from its offset is that same name)."""

from __future__ import annotations

import json

import pytest

from localkafka.jars import classpath, fetch_jars, java
from monitor.kafka.kafkanames import (PartitionName, offset_file, offset_prefix, partition_name, printable, stray_reason,
                                topic_partition_key)

FOLDERS = ["orders-3", "orders-03", "orders-+3", "orders-٣", "orders-３", "orders-٠٣", "orders-²", "orders-0",
           "orders-00", "orders-2147483647", "orders-2147483648", "t-99999999999999999999", "orders--3", "orders-",
           "orders", "orders-3a", "orders- 3", "my.topic-with-dashes-12", "__consumer_offsets-49", "orders-3\n"]
FILES = ["00000000000000000005.log", "5.log", "².log", "².snapshot", "99999999999999999999999.log",
         "99999999999999999999.log", "09223372036854775807.log", "09223372036854775808.log",
         "٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٥.log", "+0000000000000000005.log", "-0000000000000000005.log",
         "0000000000000000000005.log", "00000000000000000005.snapshot", "00000000000000000005.log.swap",
         "00000000000000000005.index.deleted", "00000000000000000005.timeindex.cleaned", "00000000000000000005.txnindex",
         "5.snapshot", "00000000000000000005.log\n", "00000000000000000005.foo.log", "00000000000000000005.log.tmp"]

KAFKA_SIDE = """
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.storage.internals.log.LocalLog;
import org.apache.kafka.storage.internals.log.LogFileUtils;

public class Names {
    static String q(String s) {
        StringBuilder b = new StringBuilder("\\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\\\') b.append('\\\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
    public static void main(String[] args) throws Exception {
        List<String> out = new ArrayList<>();
        for (String name : new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8).split("\\u0000")) {
            try {
                var tp = LocalLog.parseTopicPartitionName(new File("/logs", name));
                out.add("[" + q(name) + ", [" + q(tp.topic()) + ", " + tp.partition() + "]]");
            } catch (Exception e) {
                out.add("[" + q(name) + ", null]");
            }
        }
        List<String> files = new ArrayList<>();
        for (String name : new String(Files.readAllBytes(Paths.get(args[1])), StandardCharsets.UTF_8).split("\\u0000")) {
            try {
                long offset = LogFileUtils.offsetFromFileName(name);
                String made = LogFileUtils.filenamePrefixFromOffset(offset) + name.substring(name.indexOf('.'));
                files.add("[" + q(name) + ", [" + offset + ", " + q(made) + "]]");
            } catch (Exception e) {
                files.add("[" + q(name) + ", null]");
            }
        }
        System.out.println("{\\"folders\\": [" + String.join(", ", out) + "], \\"files\\": [" + String.join(", ", files) + "]}");
    }
}
"""


@pytest.fixture(scope="module")
def kafka_says(tmp_path_factory):
    """What Kafka 4.x's own code makes of each name (run once, in one JVM)."""
    import subprocess

    d = tmp_path_factory.mktemp("names")
    (d / "Names.java").write_text(KAFKA_SIDE)
    (d / "folders").write_text("\0".join(FOLDERS), encoding="utf-8")
    (d / "files").write_text("\0".join(FILES), encoding="utf-8")
    proc = subprocess.run([java(), "-Duser.language=en", "-Duser.country=US", "-cp", classpath(fetch_jars(lambda *_: None)),
                           str(d / "Names.java"), str(d / "folders"), str(d / "files")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    return {"folders": {n: r for n, r in got["folders"]}, "files": {n: r for n, r in got["files"]}}


@pytest.mark.parametrize("name", FOLDERS)
def test_a_folder_is_the_partition_kafka_loads_it_as(name, kafka_says):
    """Kafka's loader takes ``03``, ``+3`` and ``٣`` as partition 3 (Integer.parseInt), and refuses
    what is not an int32; so do we. The topic must be legal besides (Kafka creates no other)."""
    kafka = kafka_says["folders"][name]
    ours = partition_name(name)
    assert (None if ours is None else [ours.topic, ours.partition]) == kafka, (name, ours, kafka)
    if ours is not None:
        assert ours.canonical == (ours.name == name)


def test_the_folders_kafka_writes_and_the_others():
    assert partition_name("orders.v2-eu-12") == PartitionName("orders.v2-eu", 12, True)
    assert partition_name("orders-03") == PartitionName("orders", 3, False)
    assert partition_name("orders-٣").name == "orders-3"
    assert partition_name("lost+found-3") is None  # Kafka's parse takes it; no such topic is legal
    assert partition_name("t-2147483648") is None and partition_name("t-99999999999999999999") is None
    assert topic_partition_key("orders-3") == ("orders", 3) and topic_partition_key("orders-03") is None


# the suffixes Kafka's loader picks a file up by (LogFileUtils.isLogFile / isIndexFile, a .snapshot,
# the temporary suffixes) and the whole suffixes it writes after the 20 digits
PICKED_UP = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".cleaned", ".swap", ".deleted")
WRITTEN = {base + temp for base in (".log", ".index", ".timeindex", ".txnindex", ".snapshot")
           for temp in ("", ".cleaned", ".swap", ".deleted")}


@pytest.mark.parametrize("name", FILES)
def test_a_file_is_a_segment_only_under_the_name_kafka_makes_from_its_offset(name, kafka_says):
    """Kafka's loader parses the offset (Long.parseLong takes ``5``, ``+000..5``, Arabic-Indic digits)
    and then opens ``filenamePrefixFromOffset(offset) + suffix``: only a name equal to that is ever read
    as the segment; every other name with one of its suffixes is stray; a name without one is not
    Kafka's concern (nor ours)."""
    kafka = kafka_says["files"][name]
    ours = offset_file(name)
    suffix = name[name.index("."):]
    if not name.endswith(PICKED_UP):
        assert ours is None and stray_reason(name) is None, name
    elif kafka is not None and kafka[1] == name and suffix in WRITTEN:
        assert ours == (kafka[0], suffix), name
        assert offset_prefix(ours[0]) == name[:20]
        assert stray_reason(name) is None
    else:
        assert ours is None, name
        assert stray_reason(name) is not None, name


def test_names_without_kafkas_suffixes_are_not_stray():
    for name in ("leader-epoch-checkpoint", "partition.metadata", "partition.metadata.tmp", "README.txt"):
        assert offset_file(name) is None and stray_reason(name) is None
    assert "beyond a long" in stray_reason("99999999999999999999.log")


def test_printable_keeps_a_name_on_one_short_line():
    assert printable("orders-3\n") == "orders-3\\n"
    assert printable("\udcff.log") == "\\xff.log"  # the byte that is no UTF-8, as excerpt names it
    assert printable("²") == "²"
    assert len(printable("x" * 1000)) == 300
