"""``s3a:`` paths: one endpoint and one set of credentials for both ways the audit touches S3, and a
check of every bucket before Spark does any work.

Why two clients: the driver lists the segments and the executors read them through pyarrow's S3
filesystem (``spark_analysis.fs``), while Spark writes the Parquet tables through Hadoop's S3A
connector (``hadoop-aws`` and the AWS SDK bundle, resolved through ``spark.jars.packages``). Both
take their settings from the standard AWS variables, so one environment configures both:

* ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL``: an S3-compatible server (MinIO, Ceph, moto...);
  when set, requests use path-style addressing (``http://endpoint/bucket/key``), as such servers expect.
* ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (/ ``AWS_SESSION_TOKEN``): read by pyarrow and by
  S3A's default credential chain (its ``EnvironmentVariableCredentialsProvider``); never put in Spark's
  configuration by this module, never printed. Without them both fall back to the instance's role.
* ``AWS_REGION`` / ``AWS_DEFAULT_REGION``: the signing region (default us-east-1).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlparse

from monitor.settings.redact import redact_url

SCHEMES = ("s3", "s3a")
# Override to match a cluster's Hadoop; by default the Hadoop inside the installed PySpark.
PACKAGE_ENV = "AUDIT_HADOOP_AWS_PACKAGE"


class StorageError(ValueError):
    """A bucket the audit cannot use: named with its endpoint and why, before Spark starts."""


def is_s3(uri: str) -> bool:
    return urlparse(uri).scheme in SCHEMES


def endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def where() -> str:
    """The endpoint as shown in messages (credentials in it redacted)."""
    e = endpoint()
    return f"endpoint {redact_url(e)}" if e else "AWS's default endpoint"


def filesystem():
    """pyarrow's S3 filesystem for the configured endpoint (path-style, as S3-compatible servers expect)."""
    import pyarrow.fs as pafs

    e = endpoint()
    if not e:
        return pafs.S3FileSystem(region=region())
    u = urlparse(e)
    return pafs.S3FileSystem(endpoint_override=u.netloc + u.path.rstrip("/"), scheme=u.scheme or "https",
                             region=region(), force_virtual_addressing=False)


def hadoop_version() -> str | None:
    """The Hadoop inside the installed PySpark (``jars/hadoop-client-api-<version>.jar``)."""
    import pyspark

    for jar in (Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"):
        m = re.fullmatch(r"hadoop-client-api-(.+)\.jar", jar.name)
        if m:
            return m.group(1)
    return None


def hadoop_aws_package() -> str:
    """``org.apache.hadoop:hadoop-aws`` matching the Hadoop Spark runs (it brings the AWS SDK bundle
    it was built with as a dependency: hadoop-aws 3.5.0 -> software.amazon.awssdk:bundle 2.35.4)."""
    if os.environ.get(PACKAGE_ENV):
        return os.environ[PACKAGE_ENV]
    version = hadoop_version()
    if version is None:
        raise StorageError(f"s3a: cannot tell the Hadoop version of the installed PySpark; set {PACKAGE_ENV} "
                           "to org.apache.hadoop:hadoop-aws:<your Hadoop version>")
    return f"org.apache.hadoop:hadoop-aws:{version}"


def spark_conf() -> dict:
    """What Spark's S3A connector needs for ``s3a:`` paths: the package and, for a custom endpoint,
    the endpoint and path-style access. No credential: S3A reads the same AWS variables itself."""
    conf = {"spark.jars.packages": hadoop_aws_package(), "spark.hadoop.fs.s3a.endpoint.region": region()}
    e = endpoint()
    if e:
        conf.update({"spark.hadoop.fs.s3a.endpoint": e, "spark.hadoop.fs.s3a.path.style.access": "true",
                     "spark.hadoop.fs.s3a.connection.ssl.enabled": str(urlparse(e).scheme == "https").lower()})
    return conf


def bucket_of(uri: str) -> str:
    return urlparse(uri).netloc


def check_buckets(uris: list[str]) -> None:
    """Every bucket named by ``uris`` exists and this process may read it (a HEAD of the bucket, then a
    listing of one key under the path): else StorageError naming the bucket and the endpoint. Cheap,
    and done before Spark starts, so a wrong bucket or credentials cost no Spark work."""
    import pyarrow.fs as pafs

    seen = set()
    for uri in uris:
        if not is_s3(uri) or bucket_of(uri) in seen:
            continue
        bucket = bucket_of(uri)
        seen.add(bucket)
        fs = filesystem()
        try:
            info = fs.get_file_info(bucket)
            if info.type == pafs.FileType.NotFound:
                raise StorageError(f"{uri}: bucket {bucket} does not exist at {where()}")
            fs.get_file_info(pafs.FileSelector(bucket, recursive=False, allow_not_found=True))
        except StorageError:
            raise
        except OSError as exc:
            raise StorageError(f"{uri}: cannot use bucket {bucket} at {where()} ({_why(exc)})") from None


def _why(exc: BaseException) -> str:
    text = (str(exc).strip() or exc.__class__.__name__).splitlines()[0]
    return redact_url(text)
