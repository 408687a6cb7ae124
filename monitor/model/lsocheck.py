"""The last stable offset (LSO) from two sources, checked against each other: this replica's log
(``monitor.model.transactions``, folded in ``monitor.model.compaction.partition_state``) and the partition
leader's, from the admin API (ListOffsets at READ_COMMITTED answers the leader's LSO). ``check_lso``
says whether they agree and which one the compaction model uses.

Which wins:

* **The log**, whenever its fold is complete. It is what this broker's cleaner works from: the cleaner
  stops at its own replica's LSO (LogCleanerManager.cleanableOffsets, UnifiedLog.lastStableOffset,
  from the ProducerStateManager rebuilt from these same batches), and the fold is of the same moment
  as the checkpoint and the segment sizes the model combines it with. The admin value is the leader's
  (a replica on this broker may be a follower, whose LSO trails the leader's) and was fetched at
  another moment (the admin source's own interval).
* **The admin value** only when the fold is incomplete (the partition had read faults: an unreadable
  batch may hide a transaction's first batch or its marker) and this broker leads the partition (the
  admin LSO is then this replica's own). A follower's fold with faults stays the answer, named as
  incomplete by the partition's read faults: the leader's LSO is not this replica's.

Agreement, tolerant of the time between the two reads: an LSO held by an open transaction stays put
until that transaction ends, while an LSO at the log end moves with every write. So the two agree when
neither side has an open transaction (both sit at their log ends, which differ only by the writes
between the reads) or when both hold the same offset; otherwise they disagree, and ``held_by`` names
the side with the lower LSO: the one that sees a transaction open there that the other sees ended (or
never saw). The collector keeps how long the same side has held the same offset against the other
(``LsoDisagreement``), so a stuck transaction one side does not see grows, while short transactions
read at different moments (an exactly-once changelog) never do.
"""

from __future__ import annotations

from dataclasses import dataclass

LOG, ADMIN = "log", "admin"  # the LSO's sources


@dataclass(frozen=True)
class LeaderLso:
    """What the admin API gave for one partition, at one moment."""

    leader: int  # the leader's broker id
    last_stable_offset: int  # ListOffsets(latest, READ_COMMITTED)
    high_watermark: int  # ListOffsets(latest, READ_UNCOMMITTED)
    taken_at: float  # unix seconds


@dataclass(frozen=True)
class LsoCheck:
    source: str  # LOG | ADMIN: the LSO the compaction model uses
    log: int  # folded from this replica's log
    admin: int | None  # the leader's; None when the admin API gave none
    agree: bool | None  # None: nothing to compare with
    held_by: str | None  # on disagreement, the side with the lower LSO
    detail: str | None  # the disagreement, or why the admin value won, in words

    @property
    def value(self) -> int:
        return self.admin if self.source == ADMIN and self.admin is not None else self.log


def check_lso(log_lso: int, log_end: int, faults: int, admin: LeaderLso | None, broker_id: str | None) -> LsoCheck:
    """Compare the log's LSO (``log_lso``, ``log_end`` of the same read, ``faults`` met reading it)
    with the leader's, and choose one (see the module's docstring)."""
    if admin is None or admin.last_stable_offset < 0:
        return LsoCheck(LOG, log_lso, None, None, None, None)
    a = admin.last_stable_offset
    log_open, admin_open = log_lso < log_end, a < admin.high_watermark
    agree = (not log_open and not admin_open) or a == log_lso
    held_by = None if agree else (LOG if log_lso < a else ADMIN)
    detail = None
    if not agree:
        detail = (f"the log holds the LSO at {log_lso} (an open transaction), the leader {admin.leader} says {a}"
                  if held_by == LOG else
                  f"the leader {admin.leader} holds the LSO at {a}, the log says {log_lso}")
    leads = broker_id is not None and str(admin.leader) == str(broker_id)
    if faults and leads:
        why = f"the log had {faults} read fault(s) and this broker leads the partition: its LSO {a} is used"
        return LsoCheck(ADMIN, log_lso, a, agree, held_by, f"{detail}; {why}" if detail else why)
    return LsoCheck(LOG, log_lso, a, agree, held_by, detail)


@dataclass(frozen=True)
class LsoDisagreement:
    """A disagreement kept across refreshes: the same side holding the same offset since ``since``."""

    held_by: str
    offset: int
    since: float


def persist(previous: LsoDisagreement | None, check: LsoCheck, now: float) -> LsoDisagreement | None:
    """The disagreement after this check: kept (same side, same offset) with its start, a new one, or
    none when the sources agree or cannot be compared."""
    if check.agree is not False:
        return None
    offset = check.log if check.held_by == LOG else check.admin
    if previous is not None and (previous.held_by, previous.offset) == (check.held_by, offset):
        return previous
    return LsoDisagreement(check.held_by, offset, now)
