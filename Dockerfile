# Two images from one file (README "Install"):
#   collector (the default, last stage): `pip install kafka-compaction-monitor`, the core install: the
#       collector, inspect, logdir, explain, config check, rules render. No Java, no PySpark, no Streamlit.
#   full: `[all]`, adding the Spark audit (with the Java runtime PySpark needs) and the Streamlit dashboard.
#   docker build -t kafka-compaction-monitor .
#   docker build --target full -t kafka-compaction-monitor:full .
#   docker run -p 9690:9690 -v $PWD/monitor.yaml:/etc/compaction-monitor/monitor.yaml \
#       kafka-compaction-monitor collect --config /etc/compaction-monitor/monitor.yaml
# Default command of both: `compaction-monitor collect`, metrics on :9690.

# The wheel, with the optional C record decoder (monitor/kafka/record/_decode.c) compiled here, so that neither
# image carries a compiler.
FROM python:3.11-slim-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY monitor ./monitor
COPY boundedhttp ./boundedhttp
COPY collectors ./collectors
COPY spark_analysis ./spark_analysis
COPY dashboards ./dashboards
COPY alerts ./alerts
COPY cli ./cli
COPY localkafka ./localkafka
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# What both images share: the non-root user, the port, the health check, the entry point.
FROM python:3.11-slim-bookworm AS base
RUN useradd --system --uid 10001 --home-dir /var/lib/compaction-monitor --create-home monitor
WORKDIR /var/lib/compaction-monitor
EXPOSE 9690
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9690/metrics', timeout=4).status == 200 else 1)"
ENTRYPOINT ["compaction-monitor"]
CMD ["collect", "--port", "9690"]

# The audit and the dashboard too: a Java runtime for PySpark's JVM, and the [all] extra.
FROM base AS full
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-cache-dir "$(echo /tmp/wheels/kafka_compaction_monitor-*.whl)[all]" && rm -rf /tmp/wheels
USER monitor

# The collector image: the core install only (no extra, no Java).
FROM base AS collector
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-cache-dir /tmp/wheels/kafka_compaction_monitor-*.whl && rm -rf /tmp/wheels
USER monitor
