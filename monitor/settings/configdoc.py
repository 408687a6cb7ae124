"""The configuration reference, generated from ``monitor.yaml``'s schema (``monitor.settings.configschema``, itself
derived from the config dataclasses): ``docs/reference-config.yaml``, a ``monitor.yaml`` with every key at its
default and one comment per key saying what it does, and ``docs/reference/configuration.md``, a table of the same
keys with the file embedded.

Why from the schema: a key's type, default and meaning are each said once, on its dataclass field
(``monitor.settings.config.key``); the schema carries them to the validator, and here to the reader. A key added
to a dataclass appears in both pages; ``tests/docs/test_reference_pages.py`` fails until they are regenerated
(``python -m cli.docgen --write``), and checks that ``config check`` accepts the file as it is.

A list of mappings (``clusters``, a cluster's ``brokers``) is shown with one entry, its keys at their defaults
(a required key at the schema's first ``examples`` value), so that every key is shown where it goes.
"""

from __future__ import annotations

import textwrap

import yaml

from monitor.settings.configschema import config_schema

WIDTH = 110
YAML_PATH = "docs/reference-config.yaml"
HEADER = ("monitor.yaml: every key at its default, one comment per key saying what it does. Generated from the\n"
          "config dataclasses (monitor/settings/configmodel.py) by `python -m cli.docgen --write`: do not edit.\n"
          "`compaction-monitor config check` accepts this file as it is. A list of mappings (clusters, brokers)\n"
          "shows one entry with its keys; by default there is none.")


def _flow(value) -> str:
    """A value as one line of YAML (``[]``, ``{}``, ``null``, ``0.0.0.0``, ``30m``; a whole float as a whole
    number, as a person writes it: the key reads it as its type)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False).strip()
    return text[:-len("\n...")].strip() if text.endswith("\n...") else text


def _is_section(schema: dict) -> bool:
    """A mapping of known keys shown key by key (a dataclass), not a value of its own."""
    return "properties" in schema and "default" not in schema


def _is_list_of_sections(schema: dict) -> bool:
    return "default" in schema and "properties" in schema.get("items", {})


def _value(schema: dict):
    if "default" in schema:
        return schema["default"]
    return schema.get("examples", [None])[0]


def _comment(schema: dict) -> str:
    """What the key does, then what it takes (its ``shape``), and the keys of a free mapping with known keys."""
    text = schema.get("description", "").rstrip()
    shape = schema.get("shape")
    if shape and not _is_section(schema) and not _is_list_of_sections(schema):
        text += f" Takes {shape}."
    if "properties" in schema and not _is_section(schema):
        text += " Keys: " + ", ".join(schema["properties"]) + "."
    if "default" not in schema and "examples" in schema:
        text += " Required (no default)."
    return text.strip()


def _comment_lines(text: str, indent: str) -> list[str]:
    return [indent + "# " + line for line in textwrap.wrap(text, WIDTH - len(indent) - 2, break_on_hyphens=False)]


def _yaml_lines(props: dict, indent: str) -> list[str]:
    out = []
    for name, schema in props.items():
        out += _comment_lines(_comment(schema), indent)
        if _is_section(schema):
            out.append(f"{indent}{name}:")
            out += _yaml_lines(schema["properties"], indent + "  ")
        elif _is_list_of_sections(schema):
            out.append(f"{indent}{name}:")
            item = _yaml_lines(schema["items"]["properties"], indent + "    ")
            out.append(indent + "  - " + item[0].lstrip())
            out += item[1:]
        else:
            out.append(f"{indent}{name}: {_flow(_value(schema))}")
    return out


def reference_yaml(schema: dict | None = None) -> str:
    """``docs/reference-config.yaml``: every key of monitor.yaml (``schema``, default the config's) at its
    default, a comment above each."""
    lines = ["# " + line for line in HEADER.splitlines()] + [""]
    lines += _yaml_lines((schema or config_schema())["properties"], "")
    return "\n".join(lines) + "\n"


def _rows(props: dict, prefix: str):
    """(key path, shape, default, meaning) of every key, depth first, in the file's order."""
    for name, schema in props.items():
        path = prefix + name
        if _is_section(schema):
            yield path, "a mapping", "(its keys below)", schema.get("description", "")
            yield from _rows(schema["properties"], path + ".")
        elif _is_list_of_sections(schema):
            yield path, schema.get("shape", ""), f"`{_flow(schema['default'])}`", schema.get("description", "")
            yield from _rows(schema["items"]["properties"], path + "[].")
        else:
            default = f"`{_flow(schema['default'])}`" if "default" in schema else "required"
            meaning = schema.get("description", "")
            if "properties" in schema:
                meaning += " Keys: " + ", ".join(f"`{k}`" for k in schema["properties"]) + "."
            yield path, schema.get("shape", ""), default, meaning


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_page(schema: dict | None = None) -> str:
    """``docs/reference/configuration.md``: the keys as a table, and the reference file, linked and embedded."""
    schema = schema or config_schema()
    rows = ["| key | takes | default | what it does |", "|---|---|---|---|"]
    for path, shape, default, meaning in _rows(schema["properties"], ""):
        rows.append(f"| `{path}` | {_cell(shape)} | {_cell(default)} | {_cell(meaning)} |")
    return (
        "# Configuration reference\n\n"
        "<!-- generated from monitor/settings/configmodel.py by `python -m cli.docgen --write`: do not edit -->\n\n"
        "Every key of `monitor.yaml`, generated from the config dataclasses (`monitor/settings/configmodel.py`), the "
        "fields the schema of `compaction-monitor config check` is derived from. A test fails when this page and "
        "the code differ.\n\n"
        "The same keys as a commented file, every key at its default: "
        "[reference-config.yaml](../reference-config.yaml) (`compaction-monitor config check` accepts it as it is; "
        "copy it and keep the keys you change). `clusters[]` is a list of clusters; `clusters[].brokers[]` a "
        "cluster's list of brokers.\n\n"
        + "\n".join(rows) + "\n\n"
        "## reference-config.yaml\n\n"
        "```yaml\n" + reference_yaml(schema) + "```\n"
    )
