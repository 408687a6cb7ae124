"""What the admin source hands on (collectors.admin.state): a group's share of its topic's
delete.retention.ms (unknown, never 0, when its time lag is unknown or the retention is none), and a
broker's cleaner setting looked up by the broker id as the log dirs' sources name it (a str)."""

from __future__ import annotations

from collectors.admin.state import AdminSnapshot, GroupLag
from monitor.model.topicconfig import broker_cleaner_settings


def lag(seconds, retention_seconds) -> GroupLag:
    return GroupLag("g", "t", 0, 4, 10, 6, seconds, retention_seconds)


def test_a_groups_share_of_the_delete_retention_is_unknown_without_a_time_lag_or_a_retention():
    assert lag(3600.0, 86400.0).retention_fraction == 3600.0 / 86400.0
    assert lag(172800.0, 86400.0).retention_fraction == 2.0  # past the horizon: may miss tombstones
    assert lag(None, 86400.0).retention_fraction is None
    assert lag(10.0, 0.0).retention_fraction is None


def test_a_brokers_cleaner_setting_is_found_by_its_id_as_text_or_number():
    settings = broker_cleaner_settings(admin={"log.cleaner.threads": "3"}, admin_error="not listed")
    snap = AdminSnapshot(0.0, cleaner_settings={"1": settings})
    assert snap.cleaner_setting("1", "log.cleaner.threads").value == 3
    assert snap.cleaner_setting(1, "log.cleaner.threads").value == 3
    assert snap.cleaner_setting("2", "log.cleaner.threads") is None
    assert snap.cleaner_setting("1", "no.such.setting") is None
