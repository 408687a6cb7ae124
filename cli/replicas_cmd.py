"""``replicas compare --leader PATH --follower PATH``: two replicas' copies of one partition (partition folders, e.g. the
leader's and a follower's that was out of the ISR past ``delete.retention.ms``), compared key by key: the
keys the follower still holds alive that the leader has deleted and cleaned away
(``monitor.model.replicasafety.resurrected``), with the cause, the evidence and the fix."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

from monitor.fileio import strictjson
from monitor.kafka.logdir import parse_partition_dir_name, meta_node_id, read_meta_properties
from monitor.kafka.replicakeys import read_keys
from monitor.model.replicasafety import resurrected


def _broker(folder: Path) -> str:
    """The broker of a partition folder, from its log dir's meta.properties; else the folder itself."""
    return meta_node_id(read_meta_properties(folder.parent / "meta.properties")) or str(folder)


def _key(k: bytes) -> dict:
    return {"key": k.decode("utf-8", "backslashreplace"), "key_base64": base64.b64encode(k).decode()}


def run_compare(leader: str, follower: str, *, fmt: str = "text", out=sys.stdout, err=sys.stderr) -> int:
    """0: the follower holds no key the leader deleted; 1: it holds some (or a copy could not be read
    whole: then nothing is concluded); 2: not two folders of the same partition."""
    lp, fp = Path(leader), Path(follower)
    names = [parse_partition_dir_name(p.name) for p in (lp, fp)]
    for p, parsed in zip((lp, fp), names):
        if parsed is None or not p.is_dir():
            print(f"replicas compare: {p}: not a partition folder (TOPIC-PARTITION)", file=err)
            return 2
    if names[0] != names[1]:
        print(f"replicas compare: {lp} and {fp} are folders of different partitions", file=err)
        return 2
    (topic, partition), lb, fb = names[0], _broker(lp), _broker(fp)
    lead, back = read_keys(lp), read_keys(fp)
    if not (lead.whole and back.whole):
        for fault in lead.faults + back.faults:
            print(f"replicas compare: {fault}", file=err)
        print("replicas compare: a copy could not be read whole: no comparison made", file=err)
        return 1
    found = resurrected(lead.latest, back.latest, lead.log_start, lead.log_end)
    if fmt == "json":
        strictjson.dump({"topic": topic, "partition": partition, "leader": lb, "follower": fb,
                         "leader_log_end_offset": lead.log_end, "follower_log_end_offset": back.log_end,
                         "resurrected": [_key(k) | {"follower_offset": found.follower_offsets[k]} for k in found.keys],
                         "explanation": found.explain(topic, partition, lb, fb)}, out)
        out.write("\n")
    else:
        out.write(found.explain(topic, partition, lb, fb) + "\n")
    return 1 if found.keys else 0
