"""What is wrong with a parsed ``monitor.yaml``, every problem as ``(key path, reason)``.

Apart from the dataclasses and their loading (``monitor.settings.config``): the checks a schema cannot
make (each topic's and the cleaner's Kafka configs, unique cluster names, regular expressions, URLs once
their secret references are resolved) and the keys of earlier versions named with their replacement, so
a command can print them all, one a line, before anything runs.
"""

from __future__ import annotations

from monitor.model.topicconfig import ConfigValueError, TopicConfig, parse_broker_value

# Keys of earlier development versions (never released), and what replaced them: named in the error.
REPLACED = {
    "jmx_password_file": "jmx_password: ${directory:DIR:NAME} (the file DIR/NAME, one trailing newline dropped)",
    "jmx_password_env": "jmx_password: ${env:NAME}",
}


def _replaced(data) -> list[tuple[str, str]]:
    def items(node, key):  # a list under key, or nothing (the schema names any other shape)
        value = node.get(key) if isinstance(node, dict) else None
        return value if isinstance(value, list) else []

    found = []
    for i, c in enumerate(items(data, "clusters")):
        for j, b in enumerate(items(c, "brokers")):
            for key in REPLACED:
                if isinstance(b, dict) and key in b:
                    found.append((f"clusters[{i}].brokers[{j}].{key}", f"replaced by {REPLACED[key]}"))
    return found


def problems(data) -> list[tuple[str, str]]:
    """Every problem of a parsed ``monitor.yaml``: ``(key path, reason)``, the schema's (shapes, ranges,
    known keys: ``monitor.settings.configschema``; a replaced key named with its replacement) then what it cannot
    say (each topic's Kafka configs, unique cluster names)."""
    from monitor.settings.configschema import problems as schema_problems

    replaced = _replaced(data)
    found = replaced + [p for p in schema_problems(data) if p[0] not in {k for k, _ in replaced}]
    if found:
        return found
    for i, c in enumerate((data or {}).get("clusters") or []):
        for t, cfg in ((c or {}).get("topics") or {}).items():
            try:
                TopicConfig.from_strings(cfg)
            except ConfigValueError as exc:
                found.append((f"clusters[{i}].topics.{t}.{exc.key}", str(exc)))
        for k, v in ((c or {}).get("cleaner") or {}).items():
            try:
                parse_broker_value(k, v)
            except ConfigValueError as exc:
                found.append((f"clusters[{i}].cleaner.{k}", str(exc)))
    for key in ("topics_allow", "topics_deny"):
        found.extend(pattern_problems(key, (data or {}).get(key)))
    names = [str((c or {}).get("name", "default")) for c in (data or {}).get("clusters") or []]
    if len(set(names)) != len(names):
        found.append(("clusters", f"cluster names must be unique: {names}"))
    return found


def pattern_problems(key: str, patterns) -> list[tuple[str, str]]:
    """``topics_allow``/``topics_deny`` entries that are no regular expression, by key path."""
    from monitor.settings.topicfilter import PatternError, compile_patterns

    items = [patterns] if isinstance(patterns, str) else list(patterns or ())
    out = []
    for i, p in enumerate(items):
        try:
            compile_patterns([p])
        except PatternError as exc:
            out.append((f"{key}[{i}]" if not isinstance(patterns, str) else key, str(exc)))
    return out



def resolved_url_problems(written, resolved) -> list[tuple[str, str]]:
    """URLs of the file that are no URL once their references are resolved (``resolved_url_problem``)."""
    from monitor.settings.valuecheck import resolved_url_problem

    found = []
    pairs = [(k, (written or {}).get(k), (resolved or {}).get(k)) for k in ("prometheus_url", "collector_url")]
    for i, c in enumerate((written or {}).get("clusters") or []):
        for j, b in enumerate((c or {}).get("brokers") or []):
            rb = resolved["clusters"][i]["brokers"][j]
            pairs += [(f"clusters[{i}].brokers[{j}].{k}", b.get(k), rb.get(k)) for k in ("jmx_url", "jolokia_url")]
    for key, w, r in pairs:
        if isinstance(w, str) and isinstance(r, str) and (why := resolved_url_problem(w, r)):
            found.append((key, why))
    return found

