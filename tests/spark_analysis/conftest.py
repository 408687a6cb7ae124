"""One local Spark session (2 cores) for all Spark tests, with Spark's Kafka source resolved from
Maven Central; stopped at the end of the session."""

import pytest


@pytest.fixture(scope="session")
def spark():
    from spark_analysis.job import session

    s = session("local[2]", app="compaction-monitor-tests", kafka_source=True)
    yield s
    s.stop()
