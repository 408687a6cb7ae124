"""The local real Kafka broker (``broker``): an edge that fetches jars with Maven and starts Java
processes, for the demo, the tests and ``compaction-monitor broker``. Outside the pure core."""
