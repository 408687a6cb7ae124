"""collectors.export.groups: the consumer-groups area maps each group's lag, joined with the leader's
replica state (``collectors.export.facts``), to its series: "may miss updates" because the committed offset is
below the leader's first dirty offset is said only when the leader's log dirs are read here; a time lag
unknown has its reason instead; the group-topic aggregates count both."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

import factsfixtures as ff
from collectors.export import metrics as M
from collectors.export.groups import ConsumerGroupCollector
from collectors.export.view import View
from monitor.model.consumers import BELOW

G = {"cluster": "c", "group": "g1", "topic": "orders"}


def _registry(store):
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ConsumerGroupCollector(store, clock=lambda: 200.0, view=View("partition")))
    return reg


def test_below_the_leaders_first_dirty_offset_is_judged_on_the_leaders_replica(tmp_path):
    lags = (ff.lag(2, committed=5), ff.lag(0, committed=5))  # orders-2 cleaned to 30, orders-0 never cleaned
    reg = _registry(ff.store(tmp_path, groups=lags))
    below = {"reason": BELOW, "latest_value_only": "false"}
    assert reg.get_sample_value(M.G_MAY_MISS, G | {"partition": "2"} | below) == 1.0  # 5 < 30: cleaned past it
    assert reg.get_sample_value(M.G_MAY_MISS, G | {"partition": "0"} | below) == 0.0  # 5 >= 0
    assert reg.get_sample_value(M.G_LAG, G | {"partition": "2"}) == 35
    # the leader is broker 9, whose log dirs are not read here: that reason cannot be known, no series
    other = _registry(ff.store(tmp_path / "other", groups=lags, leader=9))
    assert other.get_sample_value(M.G_MAY_MISS, G | {"partition": "2"} | below) is None
    assert other.get_sample_value(M.G_LAG, G | {"partition": "2"}) == 35


def test_an_unknown_time_lag_has_its_reason_and_is_counted_in_the_topic(tmp_path):
    reg = _registry(ff.store(tmp_path, groups=(ff.lag(0, lag_seconds=None), ff.lag(2, lag_seconds=30.0))))
    assert reg.get_sample_value(M.G_LAG_SECONDS_UNKNOWN, G | {"partition": "0", "reason": "no_timestamp"}) == 1.0
    assert reg.get_sample_value(M.G_LAG_SECONDS, G | {"partition": "0", "method": "exact"}) is None
    assert reg.get_sample_value(M.GT_LAG_UNKNOWN, G) == 1
    assert reg.get_sample_value(M.GT_MAX_LAG_SECONDS, G) == 30.0
    assert reg.get_sample_value(M.GT_LAG, G) == 70
    assert reg.get_sample_value(M.ADMIN_LISTED_GROUPS, {"cluster": "c"}) == 1
