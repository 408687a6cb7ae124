"""``inspect`` on bad input, as a user runs it: a file that is neither a segment nor a dump gets
exactly that message naming it, every dump line that does not parse is named by file and line, and
the exit status follows the rule (1: data faults met)."""

from __future__ import annotations

import json

from clirun import Ran, run_cli
from recordfixtures import three_v2_batches

BATCH = ("baseOffset: 1200 lastOffset: 1201 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 "
         "producerEpoch: -1 partitionLeaderEpoch: 4 isTransactional: false isControl: false deleteHorizonMs: "
         "OptionalLong.empty position: 0 CreateTime: 1763805600001 size: 86 magic: 2 compresscodec: none crc: 1 "
         "isvalid: true")
REC = "| offset: {o} CreateTime: 1763805600000 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: k{o} payload: hello"


def inspect(*paths) -> Ran:
    return run_cli("inspect", "--format", "jsonl", *map(str, paths))


def test_the_issues_pasted_dump_is_read_as_text(tmp_path):
    """It began with a prompt: "unknown magic byte 115" at byte 0 before (115 is the "s" of "ops@")."""
    p = tmp_path / "ticket.txt"
    p.write_text("ops@broker-2:~/kafka$ bin/kafka-dump-log.sh --files 00000000000000001200.log --print-data-log\n"
                 "Dumping 00000000000000001200.log\nLog starting offset: 1200\n"
                 f"{BATCH}\n{REC.format(o=1200)}\n{REC.format(o=1201)}\nops@broker-2:~/kafka$ \n")
    r = inspect(p)
    assert r.returncode == 0, r.stderr
    assert [json.loads(line)["offset"] for line in r.stdout.splitlines()] == [1200, 1201]
    assert "magic" not in r.stderr


def test_neither_format_is_named_with_exactly_that_message(tmp_path):
    seg = tmp_path / "00000000000000000000.log"
    three_v2_batches(seg)
    text = tmp_path / "notes.txt"
    text.write_text("Please look at the partition, it does not compact.\nThanks\n")
    blob = tmp_path / "core.bin"
    blob.write_bytes(b"\x7fELF" + bytes(range(256)) * 4)
    r = inspect(seg, text, blob)
    assert r.returncode == 1
    assert len(r.stdout.splitlines()) == 6  # the segment's records still printed
    lines = r.stderr.splitlines()
    assert f"inspect: {text}: this is not a Kafka segment or kafka-dump-log output" in lines
    assert f"inspect: {blob}: this is not a Kafka segment or kafka-dump-log output" in lines
    assert "Traceback" not in r.stderr and "magic" not in r.stderr


def test_every_unparsable_line_is_named_by_file_and_line(tmp_path):
    p = tmp_path / "dump.txt"
    p.write_text("\n".join([
        "$ bin/kafka-dump-log.sh --files 00000000000000001200.log --print-data-log",  # 1
        "Dumping 00000000000000001200.log",                                            # 2
        BATCH,                                                                         # 3
        REC.format(o=1200),                                                            # 4
        "Exception in thread main java.lang.OutOfMemoryError",                         # 5
        REC.format(o="x12"),                                                           # 6: offset not a number
        BATCH.replace(" size: 86", ""),                                                # 7: no size
        "| CreateTime: 5",                                                             # 8
        "Dumping 00000000000000001200.index",                                          # 9
        "offset: 1300 position: 4096",                                                 # 10
        REC.format(o=1201),                                                            # 11: records in an index section
    ]) + "\n")
    r = inspect(p)
    assert r.returncode == 1
    assert [json.loads(line)["offset"] for line in r.stdout.splitlines()] == [1200]
    named = sorted(int(line.split(": line ")[1].split(":")[0]) for line in r.stderr.splitlines()
                   if line.startswith(f"inspect: dump: {p}: line "))
    assert named == [5, 6, 7, 8, 11], r.stderr
    assert f"inspect: note: {p}: line 9: skipped the section of 00000000000000001200.index" in r.stderr


def test_a_dump_saved_by_windows_tools(tmp_path):
    """PowerShell 5's ``>`` writes UTF-16 with a byte order mark; Notepad's UTF-8 has one too; CRLF."""
    text = "\r\n".join(["Dumping 00000000000000001200.log", BATCH, REC.format(o=1200), REC.format(o=1201)]) + "\r\n"
    for name, data in (("utf16.txt", text.encode("utf-16")), ("bom.txt", b"\xef\xbb\xbf" + text.encode())):
        p = tmp_path / name
        p.write_bytes(data)
        r = inspect(p)
        assert r.returncode == 0, r.stderr
        rows = [json.loads(line) for line in r.stdout.splitlines()]
        assert [(x["offset"], x["value_size"]) for x in rows] == [(1200, 5), (1201, 5)]
