"""The broker-role collector's Kubernetes resources, from what ``bench logdir --broker-size`` measured: the one
definition deploy/k8s/broker-daemonset.yaml's and deploy/k8s/kafka-logdir-sidecar.yaml's requests and limits
are written from (tests/deploy/k8s/test_k8s_sizing.py checks they agree; docs/deployment.md states the rule).

Why from a measurement: the collector's memory grows with the partitions it reads (summaries and caches a
partition), not with their bytes, and a limit below its peak is an OOM kill in a restart loop, the page
never served. The figures below are those of the run in docs/benchmarks.md ("At a broker's size", the
targets of issue 43); when a change moves them, the run's figures go here and ``python -m bench.sizing``
prints the resources to put in both manifests.

- ``limits.memory``: the peak RSS at the design point (the interpreter plus ``KIB_PER_PARTITION`` a partition,
  the larger of a cold start and a restart with the cache), times ``HEADROOM`` (Python's allocator keeps
  freed memory, a cleaner swap or a leader change makes a partition's segments be read again), rounded up to
  64 MiB.
- ``requests.memory``: that peak without the headroom (what the pod holds once its first page is made).
- ``requests.cpu``: the CPU the collector used while its record pass read at the budget, refreshes and
  scrapes going on (its busiest steady state; a refresh's own CPU between them is what issue 43's steady
  figure measures), rounded up to 50m. No CPU limit: a throttled collector serves a stale page late, and its
  record pass is bounded by its I/O budget, not by CPU.

Scale by partition count: the memory is ``memory_mib(partitions)``; the CPU does not grow with partitions
while the record pass reads (the budget bounds it), only the refresh's share does.
"""

from __future__ import annotations

import math

# measured by `bench logdir --broker-size --gb 1.5 --partitions 4000,20000 --segments 4 --io-budget 8000000`,
# docs/benchmarks.md "Issue 43's targets at 4,000 and 20,000 partitions" (2026-12-07, a 2-core machine shared
# with other agents' runs: memory does not depend on the load, CPU does a little)
INTERPRETER_MIB = 33.7  # peak RSS of a collect on a one-partition log dir (Python, its imports, the server)
# above it, a partition: the larger of a cold start's and a restart's peak over the whole run (the record pass
# included), 20,000 partitions of 5 segments: 960.6 MiB
KIB_PER_PARTITION = 47.5
# while the record pass read at the budget (8 MB/s), 20,000 partitions, a refresh a minute and scrapes going on:
# a second run of the same command at 20,000 alone (the first did not sample CPU); its peak RSS was 899 MiB
CPU_CORES_READING = 0.245

HEADROOM = 1.5
MEMORY_STEP_MIB = 64
CPU_STEP_MILLICORES = 50
# the partitions each manifest is sized for: a broker of 20,000 (issue 43's size; ordinary under KRaft)
DESIGN_PARTITIONS = 20_000
MANIFESTS = ("broker-daemonset.yaml", "kafka-logdir-sidecar.yaml")


def _up(x: float, step: int) -> int:
    return int(math.ceil(x / step) * step)


def peak_mib(partitions: int) -> float:
    """The collector's measured peak RSS at ``partitions``, in MiB."""
    return INTERPRETER_MIB + KIB_PER_PARTITION * partitions / 1024


def memory_mib(partitions: int = DESIGN_PARTITIONS) -> int:
    """``limits.memory`` in MiB: the peak times the headroom, rounded up."""
    return _up(peak_mib(partitions) * HEADROOM, MEMORY_STEP_MIB)


def request_memory_mib(partitions: int = DESIGN_PARTITIONS) -> int:
    return _up(peak_mib(partitions), MEMORY_STEP_MIB)


def cpu_millicores() -> int:
    return max(CPU_STEP_MILLICORES, _up(CPU_CORES_READING * 1000, CPU_STEP_MILLICORES))


def resources(partitions: int = DESIGN_PARTITIONS) -> dict:
    """The container's ``resources`` as the manifests write them."""
    return {"requests": {"cpu": f"{cpu_millicores()}m", "memory": f"{request_memory_mib(partitions)}Mi"},
            "limits": {"memory": f"{memory_mib(partitions)}Mi"}}


if __name__ == "__main__":
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else DESIGN_PARTITIONS
    r = resources(n)
    print(f"# {n:,} partitions: peak {peak_mib(n):.0f} MiB measured, limit x{HEADROOM:g} headroom")
    print(f"resources:\n  requests: {{cpu: {r['requests']['cpu']}, memory: {r['requests']['memory']}}}\n"
          f"  limits: {{memory: {r['limits']['memory']}}}")
