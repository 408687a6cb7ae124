"""The audit on ``s3a:`` against an S3-compatible server on loopback (moto's server mode: the
``s3_server`` fixture): it reads its segments from a bucket and writes its report there, with the
same tables as the local run of the same input; a bucket that does not exist or credentials the
server refuses end the run before Spark starts, with the bucket and the endpoint named and the
secret never printed."""

from __future__ import annotations

import json

import pytest

from auditcompare import CONFIG, audit, differences, read_run
from s3server import SECRET_KEY


def _upload(client, bucket: str, folder, prefix: str) -> int:
    n = 0
    for f in sorted(folder.rglob("*")):
        if f.is_file():
            client.put_object(Bucket=bucket, Key=f"{prefix}/{f.relative_to(folder)}", Body=f.read_bytes())
            n += 1
    return n


# the reference run (a fixture, shared with the standalone test) and the S3 run are two Spark drivers
# in one test's time; on the shared 2-core machine under load each took 2 to 5 minutes
@pytest.mark.timeout(1500)
def test_the_audit_reads_segments_from_a_bucket_and_writes_its_report_there(s3_server, audit_reference, monkeypatch):
    inputs, cfg, local = audit_reference
    client = s3_server.client()
    client.create_bucket(Bucket="kafka-audit")
    assert _upload(client, "kafka-audit", inputs, "copies/broker-1") == 16  # 15 segments and the checkpoint

    r = audit("local[2]", "s3a://kafka-audit/copies/broker-1", "s3a://kafka-audit/reports", cfg, env=s3_server.env())
    assert r.returncode == 0, r.stderr[-4000:]
    assert SECRET_KEY not in r.stdout + r.stderr

    latest = json.loads(client.get_object(Bucket="kafka-audit", Key="reports/latest.json")["Body"].read())
    assert latest["path"].startswith("s3a://kafka-audit/reports/run-")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    from spark_analysis.fs import filesystem

    fs, base = filesystem(latest["path"])
    in_bucket = read_run(fs, base)
    assert differences(local, in_bucket) == []
    keys = {o["Key"] for o in client.list_objects_v2(Bucket="kafka-audit", Prefix="reports/")["Contents"]}
    run = base.split("/", 1)[1]
    assert {f"{run}/_SUCCESS", f"{run}/summary.json", f"{run}/report.html"} <= keys
    assert not [k for k in keys if "/.tmp-" in k]  # the temporary run folder is gone
    report = client.get_object(Bucket="kafka-audit", Key=f"{run}/report.html")["Body"].read().decode()
    assert "orders" in report and SECRET_KEY not in report


@pytest.mark.parametrize("case", ["no such bucket", "refused credentials"])
def test_a_bucket_the_audit_cannot_use_is_named_before_spark_starts(s3_server, tmp_path, case):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text(CONFIG)
    env = s3_server.env()
    if case == "no such bucket":
        inputs, says = "s3a://kafka-audit-typo/copies", "bucket kafka-audit-typo does not exist at endpoint"
    else:
        # moto checks no signature until told to: a server that does (s3server.start(auth=True)) is
        # started for this case alone, and every key is unknown to it
        import s3server

        server = s3server.start(tmp_path / "moto-auth.log", auth=True)
        try:
            env = server.env()
            r = audit("local[2]", "s3a://kafka-audit/copies", str(tmp_path / "out"), cfg, env=env)
        finally:
            server.stop()
        _check_refused(r, "cannot use bucket kafka-audit at endpoint " + server.endpoint, "ACCESS_DENIED")
        return
    r = audit("local[2]", inputs, str(tmp_path / "out"), cfg, env=env)
    _check_refused(r, f"{says} {s3_server.endpoint}", None)


def _check_refused(r, says: str, why: str | None) -> None:
    assert r.returncode == 2, r.stderr[-3000:]
    assert says in r.stderr, r.stderr
    if why:
        assert why in r.stderr
    assert "starting Spark" not in r.stderr and "Traceback" not in r.stderr
    assert SECRET_KEY not in r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
