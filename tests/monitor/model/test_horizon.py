"""The delete-horizon states and checks (monitor.model.horizon)."""

from monitor.model import horizon as hz

NOW = 1_800_000_000_000
DAY = 86_400_000


def test_states():
    assert hz.state(None, NOW) == hz.UNSTAMPED
    assert hz.state(NOW + 1, NOW) == hz.PENDING
    assert hz.state(NOW, NOW) == hz.PASSED  # Kafka: deleteHorizonMs <= currentTime removes it


def test_earliest_removal():
    assert hz.earliest_removal_ms(None, NOW, DAY) == NOW + DAY
    assert hz.earliest_removal_ms(NOW - 5, NOW, DAY) == NOW - 5


def test_problems():
    ok = dict(has_horizon=True, magic=2, horizon_ms=NOW + DAY, max_timestamp=NOW - 10, now_ms=NOW,
              delete_retention_ms=DAY)
    assert hz.problem(**ok) is None
    assert hz.problem(**{**ok, "has_horizon": False, "magic": 1}) is None
    assert "magic-1" in hz.problem(**{**ok, "magic": 1})
    assert "before the batch's records" in hz.problem(**{**ok, "horizon_ms": NOW - 2 * 3_600_000 - 11})
    assert "past now" in hz.problem(**{**ok, "horizon_ms": NOW + DAY + 3_600_001})
    assert hz.problem(**{**ok, "horizon_ms": NOW + DAY + 3_600_001, "now_ms": None}) is None
