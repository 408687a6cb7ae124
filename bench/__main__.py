"""``python -m bench NAME [options]`` (or ``./dev bench NAME``): run one benchmark."""

import sys

BENCHES = {
    "reader": "bench.bench_reader",
    "logdir": "bench.bench_logdir",
    "audit": "bench.bench_audit",
    "audit-cluster": "bench.bench_audit_cluster",
    "estimate": "bench.bench_estimate",
    "restore": "bench.bench_restore",
    "inspect": "bench.bench_inspect",
    "scrape": "bench.bench_scrape",
    "exporter": "bench.bench_exporter",
    "nextclean": "bench.bench_nextclean",
    "render": "bench.bench_render",
    "memory": "bench.bench_memory",
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in BENCHES:
        print(f"usage: python -m bench {{{','.join(BENCHES)}}} [options]", file=sys.stderr)
        return 2
    import importlib

    return importlib.import_module(BENCHES[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
