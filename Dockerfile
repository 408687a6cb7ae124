# Two images from one file (docs/deployment.md "Images and packages"):
#   collector (the default, last stage): the core install (the wheel built from this folder): the
#       collector, inspect, logdir, explain, topics lint, config check, rules render. No Java, no PySpark, no Streamlit.
#       Default command `collect`, metrics on :9690, health check on that port.
#   full: `[all]`, adding the Spark audit (with the Java runtime PySpark needs) and the Streamlit dashboard.
#       Default command `dashboard` on :8501, health check on Streamlit's own /_stcore/health; `audit`
#       and every other subcommand run from it too.
#   docker build -t kafka-compaction-monitor .
#   docker build --target full -t kafka-compaction-monitor:full .
#   docker run -p 9690:9690 -v $PWD/monitor.yaml:/etc/compaction-monitor/monitor.yaml \
#       kafka-compaction-monitor collect --config /etc/compaction-monitor/monitor.yaml
#
# BASE_IMAGE: any Debian bookworm with python3 (3.11) and python3-venv, useradd and apt: the default, or
# one made from Debian's own packages where no registry is reachable (tests/deploy/imagebuild.py makes
# it with mmdebstrap). Where HTTPS to PyPI needs a private CA, pass it as a build secret, never in a layer:
#   podman build --secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt ...
# (HEALTHCHECK is a Docker-format field: podman/buildah keep it with `--format docker`.)
ARG BASE_IMAGE=python:3.11-slim-bookworm

# The wheel, with the optional C record decoder (monitor/kafka/record/_decode.c) compiled here, so that neither
# image carries a compiler. Python's headers: the python image has its own; Debian's python3 needs python3-dev.
FROM ${BASE_IMAGE} AS build
RUN pkgs="gcc libc6-dev"; \
    python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
      || pkgs="$pkgs python3-dev"; \
    apt-get update \
 && apt-get install -y --no-install-recommends $pkgs \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/build
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY monitor ./monitor
COPY boundedhttp ./boundedhttp
COPY freeport ./freeport
COPY collectors ./collectors
COPY spark_analysis ./spark_analysis
COPY dashboards ./dashboards
COPY alerts ./alerts
COPY cli ./cli
COPY localkafka ./localkafka
RUN --mount=type=secret,id=ca_bundle \
    if test -s /run/secrets/ca_bundle; then export PIP_CERT=/run/secrets/ca_bundle; fi; \
    /opt/build/bin/pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# What both images share: the non-root user, the virtualenv the project is installed in (Debian's own
# python3 takes no `pip install` outside one), the entry point, the health check's command. Each image
# says in COMPACTION_MONITOR_HEALTH_URL what its default command serves; a container that serves
# elsewhere (`collect --port 9100`, `dashboard --port 8080`) sets it to match.
FROM ${BASE_IMAGE} AS base
RUN useradd --system --uid 10001 --home-dir /var/lib/compaction-monitor --create-home monitor \
 && python3 -m venv /opt/compaction-monitor \
 && printf '%s\n' '#!/opt/compaction-monitor/bin/python' \
      'import os, sys, urllib.request' \
      'url = os.environ["COMPACTION_MONITOR_HEALTH_URL"]' \
      'sys.exit(0 if urllib.request.urlopen(url, timeout=4).status == 200 else 1)' \
      > /opt/compaction-monitor/bin/compaction-monitor-healthcheck \
 && chmod 755 /opt/compaction-monitor/bin/compaction-monitor-healthcheck
ENV PATH=/opt/compaction-monitor/bin:$PATH
WORKDIR /var/lib/compaction-monitor
ENTRYPOINT ["compaction-monitor"]

# The audit and the dashboard too: a Java runtime for PySpark's JVM, and the [all] extra.
FROM base AS full
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /tmp/wheels
RUN --mount=type=secret,id=ca_bundle \
    if test -s /run/secrets/ca_bundle; then export PIP_CERT=/run/secrets/ca_bundle; fi; \
    pip install --no-cache-dir "$(echo /tmp/wheels/kafka_compaction_monitor-*.whl)[all]" && rm -rf /tmp/wheels
USER monitor
EXPOSE 8501
# the dashboard's own health endpoint: the collector's :9690 is not served by this image's default command
ENV COMPACTION_MONITOR_HEALTH_URL=http://127.0.0.1:8501/_stcore/health
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["compaction-monitor-healthcheck"]
CMD ["dashboard", "--address", "0.0.0.0", "--port", "8501"]

# The collector image: the core install only (no extra, no Java).
FROM base AS collector
COPY --from=build /wheels /tmp/wheels
RUN --mount=type=secret,id=ca_bundle \
    if test -s /run/secrets/ca_bundle; then export PIP_CERT=/run/secrets/ca_bundle; fi; \
    pip install --no-cache-dir /tmp/wheels/kafka_compaction_monitor-*.whl && rm -rf /tmp/wheels
USER monitor
EXPOSE 9690
ENV COMPACTION_MONITOR_HEALTH_URL=http://127.0.0.1:9690/metrics
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["compaction-monitor-healthcheck"]
CMD ["collect", "--port", "9690"]
