"""collectors.app.jmx_credentials: the JMX exporter's password from a file or an environment variable,
and each way of not having one named (the file or variable, never a value)."""

import pytest

from boundedhttp import FetchError
from collectors.app import jmx_credentials
from monitor.config import BrokerConfig

URL = "http://b1:7071/metrics"


def test_no_user_no_auth_and_a_file_or_variable_gives_the_password(tmp_path, monkeypatch):
    assert jmx_credentials(BrokerConfig(id="1"), URL) is None
    f = tmp_path / "pw"
    f.write_text("s3 cret\n")
    assert jmx_credentials(BrokerConfig(id="1", jmx_username="u", jmx_password_file=str(f)), URL) == ("u", "s3 cret")
    f.write_text("rotated")  # read at every fetch
    assert jmx_credentials(BrokerConfig(id="1", jmx_username="u", jmx_password_file=str(f)), URL) == ("u", "rotated")
    monkeypatch.setenv("JMX_PW", "from-env")
    assert jmx_credentials(BrokerConfig(id="1", jmx_username="u", jmx_password_env="JMX_PW"), URL) == ("u", "from-env")


@pytest.mark.parametrize("settings, named", [
    ({"jmx_username": "u", "jmx_password_env": "NO_SUCH_VARIABLE_X"}, "NO_SUCH_VARIABLE_X"),
    ({"jmx_username": "u", "jmx_password_file": "/nonexistent/pw"}, "/nonexistent/pw"),
    ({"jmx_username": "u"}, "exactly one of"),
    ({"jmx_username": "u", "jmx_password_file": "/x", "jmx_password_env": "Y"}, "exactly one of"),
    ({"jmx_password_env": "Y"}, "without jmx_username"),
])
def test_a_password_that_cannot_be_had_is_a_credentials_error(settings, named, monkeypatch):
    monkeypatch.delenv("NO_SUCH_VARIABLE_X", raising=False)
    with pytest.raises(FetchError) as exc:
        jmx_credentials(BrokerConfig(id="1", **settings), URL)
    assert exc.value.kind == "credentials" and named in str(exc.value) and URL in str(exc.value)
