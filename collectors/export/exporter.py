"""The exporter: the area collectors (``export_broker``, ``export_partitions``, ``export_groups``,
``export_topics``, ``export_self``) registered together over one store.

They share one ``collectors.export.facts.FactsCache``: the joins across sources (a partition's report with its
broker's facts, cleaner log and cause; a group's lag with the leader's state) are made once per refresh,
and each area only maps those facts to its metric families at scrape time (prometheus_client's custom
collector style). ``View`` (``export_view``) says what goes out: granularity, health, topic filter.
"""

from __future__ import annotations

import time

from collectors.export.broker import BrokerCleanerCollector, BrokerSettingsCollector, CleanerLogCollector
from collectors.export.groups import ConsumerGroupCollector
from collectors.export.partitions import PartitionCollector
from collectors.export.replicas import ReplicaSafetyCollector
from collectors.export.own import SelfCollector
from collectors.export.topics import ConfigReviewCollector, TopicCollector
from collectors.export.view import View
from collectors.export.facts import FactsCache
from collectors.serving.runner import Store

__all__ = ["ALL", "View", "register_all"]

# the order of the page's families
ALL = (BrokerCleanerCollector, BrokerSettingsCollector, PartitionCollector, CleanerLogCollector, ConsumerGroupCollector,
       TopicCollector, ConfigReviewCollector, ReplicaSafetyCollector, SelfCollector)


def register_all(registry, store: Store, clock=time.time, view: View | None = None) -> FactsCache:
    """The area collectors registered over ``store``; their shared ``FactsCache`` returned (the served page
    releases it after each render)."""
    facts = FactsCache(store, clock)
    for cls in ALL:
        registry.register(cls(store, clock, view, facts))
    return facts
