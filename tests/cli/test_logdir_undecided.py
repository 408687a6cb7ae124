"""``logdir`` lists every partition (issue #30): one whose topic is not known to be compacted or not (never
cleaned: no cleaner checkpoint entry; no config given) has its row, saying why it is not judged and what
its listing shows, instead of being left out (and, with ``--all``, shown ``unknown`` as if Kafka's default
policy were known to be its own). ``--all`` keeps its meaning: it also reads the partitions of topics not
known to be compacted, and lists those known not to be. The command line in-process (tests/clirun.py), on files made here."""

from __future__ import annotations

import json

from clirun import run_cli
from recordfixtures import three_v2_batches


def logdir(*args) -> tuple[int, dict, str]:
    r = run_cli("logdir", "--format", "json", *map(str, args))
    return r.returncode, {x["topic"]: x for x in json.loads(r.stdout)}, r.stderr


def test_a_partition_never_cleaned_of_an_unknown_policy_is_listed_with_why(tmp_path):
    logs = tmp_path / "logs"
    for p in ("orders-0", "other-0"):
        three_v2_batches(logs / p / "00000000000000000000.log")  # offsets 0..5, 502 bytes
    (logs / "cleaner-offset-checkpoint").write_text("0\n1\norders 0 3\n")  # orders cleaned: compacted
    code, rows, err = logdir(logs)
    assert code == 0, err  # not a fault: nothing is wrong with it
    assert set(rows) == {"orders", "other"} and rows["orders"]["first_dirty_offset"] == 3
    other = rows["other"]
    assert other["cause"]["cause"] == "unknown" and "first_dirty_offset" not in other  # not read, not guessed
    assert other["not_judged"].startswith(f"not judged: never cleaned (no entry in {logs}/cleaner-offset-checkpoint) "
                                          "and its cleanup.policy is not known")
    assert (other["log_bytes"], other["segments"], other["log_dir"]) == (502, 1, str(logs))

    code, rows, err = logdir(logs, "--all")  # read as Kafka's default policy, and said to be that
    assert code == 0 and rows["other"]["log_end_offset"] == 6 and "not_judged" not in rows["other"]
    assert rows["other"]["cause"]["summary"].startswith("not known to be compacted: other-0 has no entry in the "
                                                        "cleaner's checkpoint")

    code, rows, err = logdir(logs, "--topic-config", "other:cleanup.policy=delete")  # known not compacted
    assert code == 0 and set(rows) == {"orders"}
    code, rows, err = logdir(logs, "--topic-config", "other:cleanup.policy=delete", "--all")
    assert rows["other"]["cause"]["summary"] == "cleanup.policy=delete: the log cleaner does not compact this topic"
