"""An S3-compatible server on loopback for the audit's ``s3a:`` tests: moto's server mode (PyPI
``moto[server]``), started as a process on a free port and stopped by the test session; boto3
(moto's own dependency) puts the inputs there and reads the report back.

The credentials are moto's test ones, handed to the audit as the standard AWS variables
(``spark_analysis.s3``); ``auth=True`` makes moto check them (its ``INITIAL_NO_AUTH_ACTION_COUNT``),
so a wrong key is refused as a real server refuses it."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from dataclasses import dataclass

from procs import free_port
from waiting import wait_for

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"  # moto's server accepts any key until auth is on
SECRET_KEY = "moto-secret-key-not-a-real-one-8f3a"


@dataclass
class S3Server:
    endpoint: str
    proc: subprocess.Popen

    def env(self, secret: str = SECRET_KEY, access: str = ACCESS_KEY) -> dict:
        """The audit's environment for this server: the standard AWS variables."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret,
                "AWS_DEFAULT_REGION": "us-east-1"}

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


def start(log_path, auth: bool = False) -> S3Server:
    port = free_port()
    env = dict(os.environ)
    if auth:
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"  # moto: every request is authenticated
    log = open(log_path, "wb")
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    log.close()
    server = S3Server(f"http://127.0.0.1:{port}", proc)
    try:
        wait_for(lambda: proc.poll() is not None or _up(f"{server.endpoint}/moto-api/"), 60, "moto's server up")
        if proc.poll() is not None:
            raise RuntimeError(f"moto's server exited ({proc.returncode}); see {log_path}")
    except BaseException:
        server.stop()
        raise
    return server
