"""Kafka Streams' internal topics, recognised by name, so that an operator sees which compacted topics are a
state store's changelog (its restore source) and which are repartition topics.

Kafka Streams names them (4.x sources):

* a store's changelog: ``ProcessorStateManager.storeChangelogTopic`` = ``<prefix>-<store>-changelog``
  (``<prefix>-<named topology>-<store>-changelog`` with a named topology; ``STATE_CHANGELOG_TOPIC_SUFFIX``);
  created compacted (``cleanup.policy=compact``, ``compact,delete`` for windowed stores);
* a repartition topic: ``InternalTopologyBuilder.decorateTopic`` = ``<prefix>-<name>`` with ``<name>``
  ending ``KStreamImpl.REPARTITION_TOPIC_SUFFIX`` = ``-repartition``;

where ``<prefix>`` is ``application.id``. Both the application id and the store name may contain ``-``, so a
name alone does not say where one ends: with the application ids known (``application_ids``) the split is
made, else only the role and the stem before the suffix are given. A user topic that merely ends in
``-changelog`` is indistinguishable by name (it is labelled too: the label says "by name").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

CHANGELOG_SUFFIX = "-changelog"  # ProcessorStateManager.STATE_CHANGELOG_TOPIC_SUFFIX
REPARTITION_SUFFIX = "-repartition"  # KStreamImpl.REPARTITION_TOPIC_SUFFIX
ROLES = {CHANGELOG_SUFFIX: "changelog", REPARTITION_SUFFIX: "repartition"}


@dataclass(frozen=True)
class StreamsTopic:
    topic: str
    role: str  # changelog | repartition
    stem: str  # the name before the suffix: <application.id>-<store or processor name>
    application_id: str | None = None  # when one of the known application ids prefixes the stem
    name: str | None = None  # the store (changelog) or repartition name after the application id

    def as_dict(self) -> dict:
        return {"streams_role": self.role, "streams_application_id": self.application_id,
                "streams_name": self.name}


def streams_topic(topic: str, application_ids: Iterable[str] = ()) -> StreamsTopic | None:
    """The topic's Kafka Streams role by its name; None for a topic Kafka Streams would not name so. The
    longest known application id that prefixes the stem (followed by ``-``) splits it."""
    for suffix, role in ROLES.items():
        if topic.endswith(suffix) and len(topic) > len(suffix):
            stem = topic[: -len(suffix)]
            apps = sorted((a for a in application_ids if stem.startswith(a + "-") and len(stem) > len(a) + 1),
                          key=len, reverse=True)
            if apps:
                return StreamsTopic(topic, role, stem, apps[0], stem[len(apps[0]) + 1:])
            return StreamsTopic(topic, role, stem)
    return None


def streams_role(topic: str) -> str:
    """``changelog``, ``repartition`` or ``""`` (not a Streams internal topic by name): a label's value."""
    s = streams_topic(topic)
    return s.role if s else ""
