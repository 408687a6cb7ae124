# The collector image: Python + a Java runtime (PySpark's audit jobs need one).
# Default command: `compaction-monitor collect`, metrics on :9690.
#   docker build -t kafka-compaction-monitor .
#   docker run -p 9690:9690 -v $PWD/monitor.yaml:/etc/compaction-monitor/monitor.yaml \
#       kafka-compaction-monitor collect --config /etc/compaction-monitor/monitor.yaml
FROM python:3.11-slim-bookworm

# gcc builds the optional C record decoder (monitor/record/_decode.c); without it the image still
# works, on the slower pure-Python loop.
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/compaction-monitor
COPY pyproject.toml setup.py README.md ./
COPY monitor ./monitor
COPY boundedhttp ./boundedhttp
COPY collectors ./collectors
COPY spark_analysis ./spark_analysis
COPY dashboards ./dashboards
COPY alerts ./alerts
COPY cli ./cli
COPY localkafka ./localkafka
RUN pip install --no-cache-dir . \
 && useradd --system --uid 10001 --home-dir /var/lib/compaction-monitor --create-home monitor

USER monitor
EXPOSE 9690
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9690/metrics', timeout=4).status == 200 else 1)"
ENTRYPOINT ["compaction-monitor"]
CMD ["collect", "--port", "9690"]
