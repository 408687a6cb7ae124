"""The schema of ``monitor.yaml``, derived from the config dataclasses, and the check against it.

One definition: the fields of ``Thresholds``, ``Intervals``, ``Timeouts``, ``ClusterConfig``,
``BrokerConfig`` and ``Config`` (their names, types and defaults) are the schema. A field added to
one of them is a known key at once, with the shape its type gives:

* ``str``: a string; a name ending in ``_for`` is a Prometheus duration (``30m``, ``1h30m``);
* ``float``: a finite number, at least 0 (at most 1 for a name ending in ``_ratio`` or ``_fraction``);
  a class's ``NUMBERS`` (a ClassVar) narrows its numbers further (``Intervals``: seconds above 0);
* ``int``: a whole number, at least 0; ``bool``: true or false;
* ``X | None``: X or nothing; a nested dataclass, a tuple of them, a ``dict``: a mapping or a list;
* a field's ``metadata["schema"]`` adds to or replaces what its type gives (its own range, a URL);
* a field's ``metadata["doc"]`` (``monitor.settings.config.key``) is its ``description``: what the key does;
  its default is the schema's ``default`` (both annotations only: the reference pages read them).

The check is JSON Schema (Draft 2020-12) run by ``jsonschema``, a maintained validator, plus a
``finite`` keyword (JSON Schema's numbers admit YAML's ``.inf`` and ``.nan``). Every problem is
reported, one each, naming the key path and the expected shape; only what a schema cannot say (a
topic's Kafka settings, unique cluster names) is checked by hand after.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from functools import lru_cache

from monitor.settings.jmxtemplate import template_problem
from monitor.settings.valuecheck import PORT_SHAPE, bootstrap_problem, port_problem, url_problem

# A Prometheus duration (model.ParseDuration in prometheus/common): units from y down to ms, in order.
PROMETHEUS_DURATION = r"^(0|(?!$)([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$"


def _shape_of_type(kind) -> str:
    return {"string": "a string", "number": "a finite number", "integer": "a whole number", "boolean": "true or false",
            "object": "a mapping", "array": "a list", "null": "nothing"}[kind]


def _describe(schema: dict) -> str:
    """The expected shape in words, from the schema itself when it carries no ``shape``."""
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    words = " or ".join(_shape_of_type(k) for k in kinds if k != "null") or "a value"
    bounds = []
    for key, word in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in schema:
            bounds.append(f"{word} {schema[key]}")
    return words + (f" {' and '.join(bounds)}" if bounds else "")


def _type_schema(tp, name: str, numbers: dict) -> dict:
    """The schema one Python type gives (see the module's docstring)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        s = _type_schema(inner[0], name, numbers)
        s["type"] = [*([s["type"]] if isinstance(s["type"], str) else s["type"]), "null"]
        return s
    if dataclasses.is_dataclass(tp):
        return dataclass_schema(tp, nullable=True)
    if origin is tuple:
        item = args[0]
        items = dataclass_schema(item) if dataclasses.is_dataclass(item) else _type_schema(item, name, numbers)
        what = f"mappings of {', '.join(items['properties'])}" if "properties" in items else items["shape"]
        return {"type": ["array", "null"], "items": items, "shape": f"a list of {what}"}
    if tp is dict or origin is dict:
        return {"type": ["object", "null"], "shape": "a mapping"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is str:
        if name.endswith("_for"):
            return {"type": "string", "pattern": PROMETHEUS_DURATION,
                    "shape": "a Prometheus duration such as 30m or 1h30m"}
        return {"type": "string", "minLength": 1, "shape": "a non-empty string"}
    if tp is int:
        return {"type": "integer", "minimum": 0, **numbers.get("int", {})}
    if tp is float:
        s = {"type": "number", "finite": True, "minimum": 0}
        if name.endswith(("_ratio", "_fraction")):
            s["maximum"] = 1
        s.update(numbers.get("float", {}))
        if "exclusiveMinimum" in s:
            s.pop("minimum", None)
        return s
    raise TypeError(f"no schema for {tp!r} ({name})")  # a field of a type the config does not use yet


def _default(f: dataclasses.Field):
    """A field's default as monitor.yaml writes it (a list for a tuple); MISSING for a required key and for a
    nested section (its keys carry their own)."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    v = f.default
    if v is dataclasses.MISSING or dataclasses.is_dataclass(v):
        return dataclasses.MISSING
    return list(v) if isinstance(v, tuple) else v


def dataclass_schema(cls, nullable: bool = False) -> dict:
    """The object schema of one config dataclass: its fields are the known keys."""
    hints = typing.get_type_hints(cls)
    numbers = getattr(cls, "NUMBERS", {})
    props, required = {}, []
    for f in dataclasses.fields(cls):
        s = _type_schema(hints[f.name], f.name, numbers)
        s.update(f.metadata.get("schema", {}))
        if "doc" in f.metadata:
            s["description"] = f.metadata["doc"]
        default = _default(f)
        if default is not dataclasses.MISSING:
            s["default"] = default
        if "shape" not in s:
            s["shape"] = _describe(s)
        props[f.name] = s
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out = {"type": ["object", "null"] if nullable else "object", "properties": props, "additionalProperties": False,
           "shape": f"a mapping of {', '.join(props)}"}
    if required:
        out["required"] = required
    return out


@lru_cache(maxsize=1)
def config_schema() -> dict:
    """The whole ``monitor.yaml``: ``Config``'s fields, with ``listen_address``/``listen_port`` as
    ``listen: {address, port}``."""
    from monitor.settings.configmodel import Config

    top = dataclass_schema(Config)
    props = top["properties"]
    port = props.pop("listen_port")
    listen = {"address": {**props.pop("listen_address"), "shape": "an address to listen on (0.0.0.0, a host)"},
              "port": {"type": "integer", "check": "port", "shape": PORT_SHAPE, "description": port["description"],
                       "default": port["default"]}}
    top["properties"] = {"listen": {"type": ["object", "null"], "properties": listen, "additionalProperties": False,
                                    "shape": "a mapping of address, port"}, **props}
    top["shape"] = f"a mapping of {', '.join(top['properties'])}"
    top["type"] = ["object", "null"]
    top["properties"]["listen"]["description"] = "Where the collector serves /metrics."
    return top


# The checks by the name the schema gives them (``"check": "url"``): the flags of the same values run the
# same functions (``cli.flags``). Here, not in ``valuecheck``: the template's check (``jmxtemplate``) is made
# of valuecheck's, so valuecheck cannot hold it without the two importing each other.
CHECKS = {"port": port_problem, "url": url_problem, "bootstrap": bootstrap_problem,
          "jmx_url_template": template_problem}


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    def finite(validator, value, instance, schema):
        if value and isinstance(instance, float) and not math.isfinite(instance):
            yield jsonschema.ValidationError(f"{instance!r} is not finite")

    def check(validator, value, instance, schema):  # the command line's own check of the same value
        why = CHECKS[value](instance) if instance is not None else None
        if why:
            yield jsonschema.ValidationError(why)

    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"finite": finite, "check": check})
    return cls(config_schema())


def _path(data, path) -> str:
    """``clusters[0].brokers[1].log_dirs``: list positions in brackets, mapping keys after dots."""
    out, node = "", data
    for part in path:
        if isinstance(node, list):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    return out or "(top level)"


def _key_path(parent: str, key) -> str:
    return str(key) if parent == "(top level)" else f"{parent}.{key}"


def shown(value, key=None) -> str:
    """A value as an error message shows it (``monitor.settings.valuecheck.shown``: a URL's password never, a
    long value as a short escaped excerpt); a secret (by ``key``, the value's own key) never."""
    from monitor.settings.redact import is_secret_key
    from monitor.settings.valuecheck import shown as shown_value

    if key is not None and is_secret_key(key):
        return "(a value, not shown: a secret)"
    return shown_value(value)


PRECEDENCE = ("type", "check", "finite", "pattern", "minLength", "minimum", "exclusiveMinimum", "maximum")


def problems(data) -> list[tuple[str, str]]:
    """Every way ``data`` (parsed YAML) departs from the schema: ``(key path, reason)``, one per problem,
    in the file's order of keys."""
    found: dict[str, tuple[int, str]] = {}  # path -> (precedence, reason): one problem per key
    extra: list[tuple[str, str]] = []
    for e in _validator().iter_errors(data):
        path = _path(data, e.absolute_path)
        if e.validator == "additionalProperties":
            allowed = list(e.schema.get("properties", {}))
            for k in e.instance:
                if k not in allowed:
                    extra.append((_key_path(path, k), f"unknown key (allowed: {', '.join(allowed)})"))
            continue
        if e.validator == "required":
            for k in e.validator_value:
                if k not in e.instance:
                    extra.append((_key_path(path, k), f"is required ({e.schema['properties'][k]['shape']})"))
            continue
        if "propertyNames" in e.relative_schema_path:  # a key that is no string (YAML's 123: or true:)
            extra.append((_key_path(path, e.instance), f"expected a name (a string: quote {e.instance!r}), "
                                                       f"got {type(e.instance).__name__} {e.instance!r}"))
            continue
        rank = PRECEDENCE.index(e.validator) if e.validator in PRECEDENCE else len(PRECEDENCE)
        key = e.absolute_path[-1] if e.absolute_path else None
        reason = e.message if e.validator == "check" else \
            f"expected {e.schema.get('shape') or _describe(e.schema)}, got {shown(e.instance, key)}"
        if path not in found or rank < found[path][0]:
            found[path] = (rank, reason)
    return sorted([(p, r) for p, (_, r) in found.items()] + extra, key=lambda pr: _order(data, pr[0]))


def _order(data, path: str):
    """A problem's place: the positions of its keys in the file (so problems read top to bottom)."""
    import re

    pos, node = [], data
    for part in re.findall(r"\[(\d+)\]|\.?([^.\[\]]+)", path):
        idx, key = part
        try:
            if idx:
                pos.append(int(idx))
                node = node[int(idx)]
            else:
                keys = [str(k) for k in node] if isinstance(node, dict) else []
                pos.append(keys.index(key) if key in keys else len(keys))
                node = node.get(key) if isinstance(node, dict) else None
        except (TypeError, IndexError, KeyError, AttributeError):
            break
    return pos
