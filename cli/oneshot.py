"""What ``logdir`` and ``explain`` share around one read of a broker's log dirs: the scan with every
problem printed naming the log dir, file or partition; the whole log-cleaner.log read once; the exit code."""

from __future__ import annotations

from monitor.fileio.regularfile import os_reason

# What exit 1 of a one-shot read of log dirs means, said once for the three commands that read them
# (``logdir``, ``explain``, ``collect --once``: their help and the CLI reference take it from here); the
# rule itself is ``collectors.logdirs.snapshot.LogDirSnapshot.faults_met``.
FAULT_EXIT = ("a fault met in a log dir, a checkpoint entry or a partition (a corrupt segment, an index "
              "that disagrees with its log, a file that cannot be read: each named on stderr, the partition "
              "still listed, unknown with its reason)")
NOT_A_FAULT = "A partition the cleaner kept rewriting while it was read is unknown, not a fault."


def scan(paths, config, topic_overrides: dict | None, err, prog: str, *, admin=None, include_all: bool = False,
         admin_error: str | None = None, list_undecided: bool = False):
    """``collectors.app.scan_once`` over ``paths`` (any path: the log dirs under it are found,
    ``monitor.kafka.discovery``), each problem printed to ``err`` prefixed with ``prog``."""
    from cli.progress import Progress
    from collectors.app import scan_once

    with Progress(err, prog) as progress:  # on a terminal only: "partitions 1,234/5,000 · 2.1 GiB read"
        snap, named = scan_once(paths, config, topic_overrides, admin=admin, include_all=include_all,
                                admin_error=admin_error, list_undecided=list_undecided, progress=progress.scan)
    for line in named:  # a duplicate folder that is a partition's fault is printed with the partition's below
        if line not in snap.partition_errors.values():
            print(f"{prog}: {line}", file=err)
    for d, reason in snap.log_dir_errors.items():  # a checkpoint error already names its file and line
        print(f"{prog}: {reason}" if reason.startswith(d) else f"{prog}: {d}: {reason}", file=err)
    for d, (kind, _) in snap.down.items():  # a path that is no log dir, or a log dir's broker unknown: said above
        if kind in ("io", "checkpoint") and d not in snap.unresolved:
            print(f"{prog}: {d}: log dir down, none of its partitions printed", file=err)
    for (topic, partition), reason in snap.partition_errors.items():
        print(f"{prog}: {topic}-{partition}: {reason}", file=err)  # as Kafka names the folder
    for d, folder, kind in snap.not_live:
        print(f"{prog}: {d}/{folder}: not a live replica ({kind}), skipped", file=err)
    return snap


def read_cleaner_log(path: str, err, prog: str):
    """What a whole log-cleaner.log says (``CleanerLogState``), problems printed naming file and line;
    None when it cannot be read."""
    from collectors.logdirs.cleaner_log import CleanerLogFollower

    follower = CleanerLogFollower(path)
    try:
        snap = follower.refresh()
    except OSError as exc:
        print(f"{prog}: {path}: cannot read the cleaner log: {os_reason(exc)}", file=err)
        return None
    finally:
        follower.close()
    for bad in snap.state.malformed:
        print(f"{prog}: {bad}", file=err)
    if snap.state.malformed_total > len(snap.state.malformed):
        print(f"{prog}: {path}: {snap.state.malformed_total} malformed lines in all", file=err)
    return snap.state


def exit_code(snap, cleaner_ok: bool = True) -> int:
    """2: a path given yields no log dir (``monitor.kafka.discovery``), or no log dir found could be read or
    told whose it is; 1: a fault met (``FAULT_EXIT``), or the cleaner log could not be read."""
    from monitor.kafka.discovery import CLUSTER_CONFLICT, IO, META

    fatal = bool(snap.unresolved) or all(snap.down.get(d, ("",))[0] in (IO, META, CLUSTER_CONFLICT)
                                         for d in snap.log_dirs)
    return 2 if fatal else (1 if snap.faults_met or not cleaner_ok else 0)
