"""Record the JMX exporter page of a real local broker in each agent config's shape, as test data
(``tests/collectors/test_recorded_pages.py`` reads them): ``python tests/collectors/pages/record.py``
from the repository root. Each broker gets a compacted topic written and cleaned first, so the cleaner
gauges and the throttler's count carry values of a real clean. The pages are stored gzipped, as served."""

from __future__ import annotations

import gzip
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent.parent.parent)]

from boundedhttp import get_text  # noqa: E402
from kafkatools import (compacted, create_topic, own_broker, unique_topic, wait_cleaned_up_to_active,  # noqa: E402
                        write_rounds)
from localkafka.broker import JMX_EXPORTER_CONFIGS  # noqa: E402
from localkafka.jars import KAFKA_VERSION  # noqa: E402


def record(config: str, root: Path) -> Path:
    with own_broker(root / config, f"record {config}", jmx_exporter_config=config) as state:
        t = create_topic(state.bootstrap, unique_topic("recorded"), **compacted())
        write_rounds(state.bootstrap, t, 3)
        wait_cleaned_up_to_active(state.log_dir, t)
        page = get_text(state.jmx_url, deadline=60, max_bytes=1 << 24)
    out = HERE / f"{config.removesuffix('.yaml')}.kafka-{KAFKA_VERSION}.prom.gz"
    out.write_bytes(gzip.compress(page.encode(), mtime=0))
    return out


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for cfg in JMX_EXPORTER_CONFIGS:
            print(record(cfg, Path(tmp)))
