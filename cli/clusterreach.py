"""What a one-shot command (explain, topics lint, audit) says and returns when the cluster its
``--bootstrap-server`` names could not be reached: one line naming the bootstrap address, the kind
(refused, timeout, TLS, SASL, unknown host) and the advice for it (``collectors.admin.errors``), and exit
1 (the issue's "could not do the work"), never advice meant for another cause (granting ACLs)."""

from __future__ import annotations

import sys
import time
from monitor.contract.sourcekinds import ADMIN

UNREACHED_EXIT = 1


def cause(exc: BaseException):
    """The ``collectors.admin.errors.ClusterUnreachable`` behind a failed admin step, None when the cluster
    answered (the failure was something else)."""
    from collectors.admin.errors import unreachable_cause

    return unreachable_cause(exc)


def admin_topics(prog: str, cluster, timeout: float = 10.0, err=None, groups: list | None = None):
    """One admin refresh of ``cluster``'s topics (``collectors.admin.source.AdminFetcher.topics``) for ``prog``,
    which goes on without it: (the snapshot or None, why there is none, whether the cluster was out of
    reach). A failure is said in one line on ``err``. ``groups``: a list that gets, when the cluster's
    consumer_groups is on, the consumer groups' lags on those topics (a ``GroupSnapshot``, the collector's
    consumer-groups refresh) or, when that read failed, nothing (its check is then not run)."""
    from collectors.admin.source import AdminFetcher

    err = err or sys.stderr
    try:
        fetcher = AdminFetcher(cluster, timeout=timeout)
        try:
            snap = fetcher.topics()
            if groups is not None and cluster.consumer_groups:
                from collectors.admin.groups import SAMPLE_GAP_SECONDS, undated

                try:
                    got = fetcher.group_lags(snap.topics, snap.taken_at)
                    if undated(got):  # a second log-end-offset sample dates them (collectors.app.second_sample)
                        time.sleep(SAMPLE_GAP_SECONDS)
                        later = fetcher.topics()
                        got = fetcher.group_lags(later.topics, later.taken_at)
                    groups.append(got)
                except Exception as exc:  # noqa: BLE001 - the topics stand without; the groups' check is not run
                    print(f"{prog}: consumer groups of {cluster.bootstrap_servers} unavailable ({exc})", file=err)
            return snap, None, False
        finally:
            fetcher.close()
    except Exception as exc:  # noqa: BLE001 - the command goes on with the config file; other configs unknown
        why, unreached = admin_step_failed(prog, cluster.bootstrap_servers, exc, err)
        if not unreached:
            print(f"{prog}: {why}; using the config file's, the others are unknown (never Kafka's defaults: each "
                  "config's source says which)", file=err)
        return None, why, unreached


def admin_step_failed(prog: str, bootstrap: str, exc: BaseException, err=None) -> tuple[str, bool]:
    """A failed admin step of ``prog``: the one line printed (the cluster out of reach, else the step's
    error), and (the reason the configs it would give are unknown, whether the cluster was unreached)."""
    unreached = cause(exc)
    if unreached is not None:
        err = err or sys.stderr
        print(f"{prog}: {unreached.sentence}", file=err)
        return unreached.sentence, True
    return f"topic configs from {bootstrap} unavailable ({exc})", False


def exit_code(unreached: bool, code: int) -> int:
    """A command's exit code when its cluster was out of reach: at least 1 (a usage error's 2 stays)."""
    return max(code, UNREACHED_EXIT) if unreached else code


def unreached_source(statuses) -> str | None:
    """The sentence of an admin source down because its cluster was out of reach, None when none is."""
    from collectors.admin.errors import ClusterUnreachable

    prefix = ClusterUnreachable.__name__ + ": "  # the store's "<exception type>: <text>" (collectors.serving.runner)
    return next((st.last_error[len(prefix):] for st in statuses
                 if st.kind == ADMIN and not st.up and (st.last_error or "").startswith(prefix)), None)
