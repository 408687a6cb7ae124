"""Guards on the project's shape: who may import what (checked on imports, not file names), the core's
layers in their order, the Dockerfile copies what exists, docs/reference/metrics.md documents what is exported."""

from __future__ import annotations

import ast
import re
import shlex
import sys
from pathlib import Path

from pyproject_deps import distributions, modules

ROOT = Path(__file__).resolve().parent.parent

CORE = "monitor"  # the pure core: Kafka's formats, the compaction model, configuration
# The core's layers, bottom up: a module of one imports only from its own layer and the layers below it.
# fileio: files read and written safely; kafka: Kafka's files and formats; model: Kafka's behaviour, with the
# comparisons Kafka makes; settings: the monitor's own configuration; contract: what the edges share (the rule
# table, the panels, an audit run's layout); verdicts: ours (causes, health, the config review, accuracy).
LAYERS = ("fileio", "kafka", "model", "settings", "contract", "verdicts")
# Below these, nothing knows what the monitor is configured to call unhealthy: Kafka's figures do not depend
# on the alerts or on monitor.yaml (the rule table refers to the model's comparisons, never the reverse).
MODEL_LAYERS = ("fileio", "kafka", "model")
RULE_TABLE = f"{CORE}.contract.rules"
SETTINGS = f"{CORE}.settings"
EDGES = {"collectors", "spark_analysis", "dashboards", "alerts", "localkafka"}  # each reaches one outside world
COMPOSITION_ROOT = "cli"  # the command line: the only package that imports several edges
TOOLS = {"bench"}  # developer tools beside the product, like tests/: may import anything
# Our own leaf libraries, used like third-party ones: they import only the standard library (never a
# package of ours) and any edge may import them. boundedhttp is the one bounded HTTP GET that the
# collector, the dashboard and the demo all need: edges may not import each other, and it opens
# sockets, which the core may not. freeport is the one way a process we start gets a loopback port (the
# local broker, the standalone Spark cluster, the demo).
SHARED = {"boundedhttp", "freeport"}
OURS = {CORE, COMPOSITION_ROOT} | EDGES | TOOLS | SHARED

# Pure data libraries the core may use besides the standard library: CRC-32C of record batches,
# the compression codecs, YAML for monitor.yaml, and jsonschema to check monitor.yaml against the
# schema derived from the config dataclasses (monitor.settings.configschema): a maintained validator that
# reads plain data and reaches no network or process (its remote $ref retrieval is never used: the
# schema has no $ref), so it belongs with the config it checks.
# numpy (optional, see OPTIONAL_IMPORTS): the cleaner simulation (monitor.model.cleanarrays) decides each
# record's fate over the decoder's fixed-width arrays; plain arrays in memory, no I/O of its own.
CORE_LIBRARIES = {"crc32c", "cramjam", "yaml", "jsonschema", "numpy"}
# Standard-library modules that talk to the network or start processes: edges' business, not the core's.
NETWORK_OR_PROCESS = {"socket", "_socket", "ssl", "_ssl", "http", "urllib.request", "ftplib", "smtplib", "poplib",
                      "imaplib", "nntplib", "telnetlib", "xmlrpc", "socketserver", "wsgiref", "webbrowser", "asyncio",
                      "select", "selectors", "subprocess", "multiprocessing", "concurrent", "pty"}
# ... and the os functions that start a process or replace this one (os.system, os.fork, os.execv, ...)
OS_PROCESS_CALL = re.compile(r"system|popen|fork|forkpty|exec\w*|spawn\w*|posix_spawnp?|startfile")
HEAVY = {"pyspark", "streamlit", "plotly", "prometheus_client", "confluent_kafka", "requests", "pandas",
         "pyarrow", "numpy"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, module: str, is_package: bool = False, top_level_only: bool = False,
            names: bool = False) -> set[str]:
    """Every module a source imports, dotted and absolute: ``import``, ``from ... import`` (relative
    ones resolved against ``module``), ``importlib.import_module("...")`` and ``__import__("...")``,
    at module level and inside functions and classes (unless ``top_level_only``). With ``names``,
    ``from X import n`` gives ``X.n`` (the module n when there is one, else a name of X) instead of X."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source_module = ".".join(base + ([node.module] if node.module else []))
            else:
                source_module = node.module
            if names:
                found |= {f"{source_module}.{a.name}" for a in node.names if a.name != "*"}
            else:
                found.add(source_module)
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in ("import_module", "__import__"):
                arg = node.args[0] if node.args else None
                found.add(arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                          else "<dynamic import>")
    return found


def _package_imports(package: str) -> dict[str, set[str]]:
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        out[str(path.relative_to(ROOT))] = imports(path.read_text(), _module_name(path), path.name == "__init__.py")
    return out


def _top(name: str) -> str:
    return name.split(".")[0]


def _is(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_walker_sees_every_kind_of_import():
    src = ("import os\nfrom . import sibling\nfrom ..up import x\n"
           "def f():\n    import collectors.app\n    from pyspark.sql import F\n"
           "class C:\n    def g(self):\n        importlib.import_module('alerts.render')\n"
           "        return __import__(name)\n")
    assert imports(src, "monitor.pkg.reader") == {
        "os", "monitor.pkg", "monitor.up", "collectors.app", "pyspark.sql", "alerts.render", "<dynamic import>"}
    assert imports(src, "monitor.pkg.reader", top_level_only=True) == {"os", "monitor.pkg", "monitor.up"}


def test_every_package_has_a_place_in_the_layout():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == OURS, f"unclassified: {sorted(packages - OURS)}; gone: {sorted(OURS - packages)}"


def test_core_imports_only_the_standard_library_itself_and_pure_data_libraries():
    """monitor/ imports no edge, no command line, no network client, no process launcher."""
    for path, found in _package_imports(CORE).items():
        for name in found:
            top = _top(name)
            ok = (top == CORE or top in CORE_LIBRARIES
                  or (top in sys.stdlib_module_names and not _is(name, NETWORK_OR_PROCESS)))
            assert ok, f"{path} imports {name}: the core may import only the standard library (no network, " \
                       f"no processes), {CORE} and {sorted(CORE_LIBRARIES)}"


def test_core_starts_no_process_through_os():
    """No ``os.system``, ``os.popen``, ``os.fork``, ``os.exec*``, ``os.spawn*``: a process started without
    importing subprocess is still one."""
    for path in sorted((ROOT / CORE).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
                assert not OS_PROCESS_CALL.fullmatch(node.attr), \
                    f"{path.relative_to(ROOT)}:{node.lineno} uses os.{node.attr}: the core starts no process"
            if isinstance(node, ast.ImportFrom) and node.module == "os":
                bad = [a.name for a in node.names if OS_PROCESS_CALL.fullmatch(a.name)]
                assert not bad, f"{path.relative_to(ROOT)}:{node.lineno} imports os.{bad}: the core starts no process"


def _layer_of(name: str) -> str | None:
    """The layer a dotted name of the core is in (``monitor.model.compaction`` -> ``model``), else None."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == CORE and parts[1] in LAYERS else None


def test_every_core_module_sits_in_a_layer():
    """monitor/ holds its __init__ and the layer packages, nothing else: a module added flat has no place in
    the order. Each layer's __init__ says what the layer is and what it may import."""
    flat = sorted(p.name for p in (ROOT / CORE).iterdir()
                  if (p.suffix == ".py" and p.name != "__init__.py") or (p.is_dir() and (p / "__init__.py").exists()
                                                                          and p.name not in LAYERS))
    assert not flat, f"{CORE}/ {flat}: in no layer; move each into one of {CORE}/{{{','.join(LAYERS)}}}/"
    for layer in LAYERS:
        init = ROOT / CORE / layer / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) if init.exists() else None
        assert doc and "May import" in doc, f"{init.relative_to(ROOT)}: a docstring saying what the layer is and " \
                                            f"what it may import"


def layer_violations(package_imports: dict[str, set[str]]) -> list[str]:
    """Each import of a core module that is not of its own layer or one below it, and each import of the
    core by its bare name (``from monitor import x``: which layer x is in cannot be told from the import)."""
    out = []
    for path, found in package_imports.items():
        own = _layer_of(_module_name(ROOT / path))
        if own is None:
            continue  # monitor/__init__.py
        allowed = LAYERS[: LAYERS.index(own) + 1]
        for name in sorted(found):
            if _top(name) != CORE:
                continue
            layer = _layer_of(name)
            if layer is None:
                out.append(f"{path} imports {name}: import from a layer ({CORE}.<layer>), one of {list(LAYERS)}")
            elif layer not in allowed:
                out.append(f"{path} ({own}) imports {name} ({layer}): a layer imports only {list(allowed)}")
    return out


def test_each_layer_imports_only_itself_and_the_layers_below():
    bad = layer_violations(_package_imports(CORE))
    assert not bad, "the core's layer order (LAYERS, bottom up) is broken:\n" + "\n".join(bad)


def model_violations(package_imports: dict[str, set[str]]) -> list[str]:
    out = []
    for path, found in package_imports.items():
        if _layer_of(_module_name(ROOT / path)) not in MODEL_LAYERS:
            continue
        out += [f"{path} imports {n}: the model states Kafka's figures and comparisons; the rule table and "
                f"the settings refer to them, never the reverse" for n in sorted(found) if _is(n, {RULE_TABLE, SETTINGS})]
    return out


def test_the_model_imports_neither_the_rule_table_nor_any_settings():
    """Kafka's own tests (the cleaner's pick, the throttle, a group past the cleaner) are the model's: the
    model does not depend on the alert table nor, through it, on monitor.yaml."""
    bad = model_violations(_package_imports(CORE))
    assert not bad, "\n".join(bad)


def test_the_layer_guards_fail_on_a_wrong_import():
    """The two guards above, fed the imports of a model module that reaches up (as compaction once took its
    comparison from the rule table) and of a bare ``from monitor import``."""
    wrong = {"monitor/model/compaction.py": imports("from monitor.contract.rules import CLEANABLE_RATIO_ABOVE_MIN\n"
                                                    "from monitor.settings import config\n", "monitor.model.compaction"),
             "monitor/kafka/dump.py": imports("from monitor import strictjson\n", "monitor.kafka.dump"),
             "monitor/contract/rules.py": imports("def f():\n    from monitor.verdicts.causes import CAUSES\n",
                                                  "monitor.contract.rules")}
    assert layer_violations(wrong) == [
        "monitor/model/compaction.py (model) imports monitor.contract.rules (contract): a layer imports only "
        "['fileio', 'kafka', 'model']",
        "monitor/model/compaction.py (model) imports monitor.settings (settings): a layer imports only "
        "['fileio', 'kafka', 'model']",
        "monitor/kafka/dump.py imports monitor: import from a layer (monitor.<layer>), one of " + str(list(LAYERS)),
        "monitor/contract/rules.py (contract) imports monitor.verdicts.causes (verdicts): a layer imports only "
        "['fileio', 'kafka', 'model', 'settings', 'contract']"]
    assert [v.split(":")[0] for v in model_violations(wrong)] == [
        "monitor/model/compaction.py imports monitor.contract.rules", "monitor/model/compaction.py imports monitor.settings"]


def test_core_tests_mirror_the_layers():
    """tests/monitor/<layer>/[package/]test_x.py for monitor/<layer>/[package/]x.py: no test file sits flat
    under tests/monitor/, and each folder of tests mirrors a folder of the core."""
    tests = ROOT / "tests" / CORE
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.parent.relative_to(tests)
        assert rel.parts and rel.parts[0] in LAYERS, f"{path.relative_to(ROOT)}: in no layer's folder"
        assert (ROOT / CORE / rel / "__init__.py").exists(), f"{path.relative_to(ROOT)}: {CORE}/{rel}/ does not exist"


# collectors/' rooms, bottom up, each room's modules importing only their own room and those it names here.
# serving: threads, store, HTTP (below everything); admin, logdirs, jmx: the three sources, side by side,
# blind to each other; export: joins their snapshots and renders the page. collectors/app.py (above all
# rooms) wires a config into them; nothing else sits flat in collectors/.
COLLECTOR_ROOMS = {"serving": (), "admin": ("serving",), "logdirs": ("serving",), "jmx": ("serving",),
                   "export": ("serving", "admin", "logdirs", "jmx")}
COLLECTOR_TOP = {"__init__.py", "app.py"}


def room_violations(package_imports: dict[str, set[str]]) -> list[str]:
    """Each import, by a module in a room of collectors/, of a collectors module outside its own room and the
    rooms it may import (``COLLECTOR_ROOMS``), and of ``collectors.app`` or the bare ``collectors``."""
    out = []
    for path, found in package_imports.items():
        parts = Path(path).parts
        if len(parts) < 3 or parts[1] not in COLLECTOR_ROOMS:
            continue
        own = parts[1]
        allowed = {own, *COLLECTOR_ROOMS[own]}
        for name in sorted(found):
            bits = name.split(".")
            if bits[0] != "collectors":
                continue
            if len(bits) < 2 or bits[1] not in allowed:
                out.append(f"{path} ({own}) imports {name}: a module of {own}/ imports only from "
                           f"{sorted(allowed)}")
    return out


def test_collectors_sit_in_rooms_that_import_in_order():
    """collectors/ holds app.py and the rooms of COLLECTOR_ROOMS, each with an __init__ saying what it holds
    and may import; a room imports only itself and the rooms below it."""
    flat = sorted(p.name for p in (ROOT / "collectors").iterdir()
                  if (p.suffix == ".py" and p.name not in COLLECTOR_TOP)
                  or (p.is_dir() and (p / "__init__.py").exists() and p.name not in COLLECTOR_ROOMS))
    assert not flat, f"collectors/ {flat}: in no room; move each into one of collectors/{{{','.join(COLLECTOR_ROOMS)}}}/"
    for room in COLLECTOR_ROOMS:
        init = ROOT / "collectors" / room / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) if init.exists() else None
        assert doc and "May import" in doc, f"{init.relative_to(ROOT)}: a docstring saying what the room holds " \
                                            f"and what it may import"
    bad = room_violations(_package_imports("collectors"))
    assert not bad, "collectors/' room order (COLLECTOR_ROOMS) is broken:\n" + "\n".join(bad)


def test_the_room_guard_fails_on_a_wrong_import():
    wrong = {"collectors/admin/topics.py": imports("from collectors.logdirs.snapshot import PartitionReport\n"
                                                   "def f():\n    from collectors import app\n", "collectors.admin.topics"),
             "collectors/serving/webserver.py": imports("from collectors.export.exposition import X\n",
                                                        "collectors.serving.webserver"),
             "collectors/export/facts.py": imports("from collectors.logdirs.snapshot import PartitionReport\n",
                                                   "collectors.export.facts")}
    assert [v.split(":")[0] for v in room_violations(wrong)] == [
        "collectors/admin/topics.py (admin) imports collectors", "collectors/admin/topics.py (admin) imports "
        "collectors.logdirs.snapshot", "collectors/serving/webserver.py (serving) imports collectors.export.exposition"]


def test_collector_tests_sit_in_their_rooms():
    """A test named after a room's module sits in tests/collectors/<room>/; tests/collectors/ itself holds the
    scenarios that cross rooms (a real broker, a cluster, a fault)."""
    for path in sorted((ROOT / "tests" / "collectors").rglob("test_*.py")):
        rel = path.parent.relative_to(ROOT / "tests" / "collectors")
        assert not rel.parts or rel.parts[0] in COLLECTOR_ROOMS, f"{path.relative_to(ROOT)}: in no room's folder"


def test_shared_libraries_import_only_the_standard_library():
    for lib in sorted(SHARED):
        for path, found in _package_imports(lib).items():
            bad = {n for n in found if _top(n) != lib and _top(n) not in sys.stdlib_module_names}
            assert not bad, f"{path} imports {sorted(bad)}: a shared library of ours imports only the standard library"


def test_edges_import_only_the_core_and_libraries():
    for edge in sorted(EDGES):
        for path, found in _package_imports(edge).items():
            bad = {n for n in found if _top(n) in OURS - {edge, CORE} - SHARED or n == "<dynamic import>"}
            assert not bad, f"{path} imports {sorted(bad)}: an edge imports only {CORE} and libraries"


def test_only_the_command_line_imports_it():
    for package in sorted(OURS - TOOLS - {COMPOSITION_ROOT}):
        for path, found in _package_imports(package).items():
            assert not {n for n in found if _top(n) == COMPOSITION_ROOT}, f"{path} imports the command line"


def test_command_line_imports_edges_lazily():
    """Its modules import no edge and no heavy library at module level: ``compaction-monitor inspect``
    does not pay for PySpark, and each subcommand needs only its own edge installed."""
    for path in sorted((ROOT / COMPOSITION_ROOT).rglob("*.py")):
        top = {_top(n) for n in imports(path.read_text(), _module_name(path), path.name == "__init__.py",
                                         top_level_only=True)}
        assert not top & (EDGES | HEAVY), f"{path.relative_to(ROOT)} imports {sorted(top & (EDGES | HEAVY))} at load"


# The packages a plain core install (`pip install .`) needs (the collector, inspect, logdir, explain,
# config check, rules render, the local broker) and the extra each other package needs (pyproject.toml).
SLIM = {CORE, COMPOSITION_ROOT, "collectors", "alerts", "localkafka"} | SHARED
EXTRA_OF = {"spark_analysis": "audit", "dashboards": "dashboard"}


def test_every_product_package_is_slim_or_has_its_extra():
    assert SLIM | set(EXTRA_OF) == OURS - TOOLS


def _third_party(found: set[str]) -> set[str]:
    return {_top(n) for n in found if _top(n) not in sys.stdlib_module_names and _top(n) not in OURS}


# Imported where installed, with a fallback when not (never a dependency): bcrypt in collectors/serving/webconfig.py
# checks the web config's basic-auth hashes, else the system's crypt(3) does; numpy in
# monitor/model/cleanarrays.py decides a batch's records in vector operations, else a plain loop does
# (tests/monitor/model/test_nextclean.py runs every case both ways).
OPTIONAL_IMPORTS = {"bcrypt", "numpy"}


def test_slim_packages_import_only_the_core_dependencies():
    """Every import of the slim packages, at load or inside a function, is the standard library, ours, or a
    module of pyproject.toml's core dependencies: no PySpark, pandas, pyarrow, Streamlit or plotly."""
    allowed = modules(distributions())
    assert not allowed & {"pyspark", "pandas", "pyarrow", "streamlit", "plotly", "numpy"}, sorted(allowed)
    for package in sorted(SLIM):
        for path, found in _package_imports(package).items():
            bad = _third_party(found) - allowed - OPTIONAL_IMPORTS
            assert not bad, f"{path} imports {sorted(bad)}, which the core install does not have " \
                            f"(core: {sorted(allowed)}): move it behind an extra"


def test_packages_behind_an_extra_import_only_the_core_and_that_extra():
    for package, extra in sorted(EXTRA_OF.items()):
        allowed = modules(distributions()) | modules(distributions(extra))
        for path, found in _package_imports(package).items():
            bad = _third_party(found) - allowed
            assert not bad, f"{path} imports {sorted(bad)}, not a dependency of the core or of [{extra}]"


# Functions of cli/ allowed to import an extra's package outside its subcommand's handler: none today (the
# command-line reference reads the audit's flags through cli.audit_cmd.audit_parser, the audit's own).
EXTRA_IMPORT_EXEMPT: set[str] = set()


def test_the_audit_parser_needs_no_package_of_the_audit_extra():
    """What EXTRA_IMPORT_EXEMPT relies on: spark_analysis.job and every module of ours it imports at load, in
    turn, import no package of the audit extra at load (pyspark, pyarrow... only inside the functions that run)."""
    from cli import extras

    todo, seen = ["spark_analysis.job"], set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = ROOT / (module.replace(".", "/") + ".py")
        if not path.exists():
            path = ROOT / module.replace(".", "/") / "__init__.py"
        if not path.exists():
            continue  # a name imported from a package (from pkg import name): the package is read already
        found = imports(path.read_text(), module, path.name == "__init__.py", top_level_only=True)
        heavy = {n for n in found if _top(n) in extras.EXTRAS["audit"]}
        assert not heavy, f"{module} imports {sorted(heavy)} at load: clidoc's audit_parser would need the extra"
        todo += [n for n in found if _top(n) in OURS]
    assert "spark_analysis.failure" in seen


def test_the_command_line_imports_packages_behind_an_extra_only_in_their_subcommands():
    """cli/ reaches spark_analysis and dashboards only from a handler that cli.extras checks first (or the
    subcommand's parser, ``<subcommand>_parser``, which main builds after that check)."""
    from cli import extras

    for path in sorted((ROOT / COMPOSITION_ROOT).rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)
                   and f"{path.relative_to(ROOT)}:{n.name}" not in EXTRA_IMPORT_EXEMPT):
            needs = {EXTRA_OF[_top(n)] for n in imports(ast.unparse(fn), _module_name(path)) if _top(n) in EXTRA_OF}
            command = fn.name.removeprefix("cmd_").removesuffix("_parser")
            assert all(extras.SUBCOMMANDS.get(command) in (e, "all") for e in needs), \
                f"{path.relative_to(ROOT)}:{fn.name} imports a package of {sorted(needs)} without being a " \
                f"subcommand that cli.extras checks for it"


def test_dockerfile_copies_existing_paths():
    text = (ROOT / "Dockerfile").read_text()
    lines = [ln.strip() for ln in re.sub(r"\\\n", " ", text).splitlines()]
    copies = [ln for ln in lines if ln.upper().startswith(("COPY ", "ADD "))]
    assert copies, "the Dockerfile copies nothing"
    for ln in copies:
        if "--from=" in ln:  # from an earlier stage, not from the build context
            continue
        args = [a for a in shlex.split(ln)[1:] if not a.startswith("--")]
        for src in args[:-1]:
            assert (ROOT / src).exists(), f"Dockerfile copies {src}, which does not exist"
    assert re.search(r"^USER\s+(?!root)\S+", text, re.M), "the image must run as a non-root user"
    assert re.search(r"^HEALTHCHECK\s", text, re.M)
    assert re.search(r'^CMD\s.*"collect"', text, re.M), "default command runs `compaction-monitor collect`"


def _dockerfile_stages() -> dict[str, str]:
    """Each ``FROM ... AS name`` stage's instructions (continuation lines joined), in order."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    stages, name = {}, None
    for ln in (ln.strip() for ln in text.splitlines()):
        if m := re.match(r"FROM\s+\S+\s+AS\s+(\S+)", ln, re.I):
            name = m.group(1)
            stages[name] = ""
        elif name and ln and not ln.startswith("#"):
            stages[name] += ln + "\n"
    return stages


def test_the_default_image_is_the_slim_collector_and_full_adds_the_extras():
    """The last stage (what `docker build .` makes) installs the core alone: no extra, no Java; the
    `full` stage adds [all] and the Java runtime PySpark needs. Both run as the non-root user."""
    stages = _dockerfile_stages()
    assert list(stages)[-1] == "collector", list(stages)
    collector, full = stages["collector"], stages["full"]
    installs = [ln for ln in collector.splitlines() if "pip install" in ln]
    assert installs and not any("[" in ln for ln in installs), installs
    assert not re.search(r"openjdk|jre|default-jre", collector) and not re.search(r"openjdk|jre", stages["base"])
    assert re.search(r"pip install .*\[all\]", full) and re.search(r"openjdk-\d+-jre-headless", full)
    for name in ("collector", "full"):
        assert re.search(r"^USER\s+(?!root)\S+", stages[name], re.M), name
    # neither runtime image keeps the compiler: the C decoder is compiled in the build stage
    assert "gcc" in stages["build"] and not any("gcc" in stages[n] for n in ("base", "full", "collector"))


def test_compose_builds_the_image_each_service_needs():
    import yaml

    services = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())["services"]
    stages = _dockerfile_stages()
    assert services["compaction-monitor"]["build"]["target"] == "collector"
    assert services["dashboard"]["build"]["target"] == "full"
    assert {s["build"]["target"] for s in services.values() if isinstance(s.get("build"), dict)} <= set(stages)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./dev test" in readme and "./dev test" in ci
    assert "./dev demo" in readme


def test_metrics_page_is_generated_from_the_registry():
    """Each metric's meaning is stated once, in its help (collectors/export/metrics.py): docs/reference/metrics.md's
    table is that registry rendered (``python -m collectors.export.metricsdoc --write docs/reference/metrics.md``, or
    this test with DOCS_UPDATE=1), so it lists every exported metric, its unit as its name states it, and what
    Prometheus' # HELP says."""
    import os

    from collectors.export.metrics import METRICS, stability
    from collectors.export.metricsdoc import entry, exported_name, unit, with_table

    path = ROOT / "docs" / "reference" / "metrics.md"
    readme = path.read_text()
    want = with_table(readme, str(path))
    if os.environ.get("DOCS_UPDATE") == "1":
        path.write_text(want)
        readme = want
    assert readme == want, "docs/reference/metrics.md's table differs from collectors/export/metrics.py: regenerate " \
                           "it with `python -m collectors.export.metricsdoc --write docs/reference/metrics.md` (or DOCS_UPDATE=1)"
    for name, (kind, help_, labels) in METRICS.items():
        shown = exported_name(name, kind)
        assert entry(shown, kind, unit(shown, kind, help_), labels, help_, stability(name)) in readme
        assert f"`{shown}`\n:   *{kind}, {unit(shown, kind, help_)};" in readme and help_ in readme


# The packages that name our series and alerts but must take the names from their one definition: the
# prefix from monitor/contract/metricnames.py, the alert names from the rule table (monitor.contract.rules.ALERT).
# alerts/promtool_tests.py is left out: its scenarios are test input written in full, as tests/ are.
NAMED_ONCE = ("dashboards", "collectors", "cli", "alerts")
NAMED_ONCE_EXEMPT = {"alerts/promtool_tests.py"}


def _code_strings(source: str):
    """(line, text) of every string literal of a module but its docstrings (prose may name an alert),
    f-strings' literal parts included."""
    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def named_literals(source: str) -> list[str]:
    """Where a module spells an alert name or the metric prefix as a string of its own."""
    from monitor.contract.metricnames import NAMESPACE
    from monitor.contract.rules import RULES

    alerts = re.compile(r"\b(" + "|".join(sorted({r.alert for r in RULES})) + r")\b")
    found = []
    for line, text in _code_strings(source):
        if NAMESPACE in text:
            found.append(f"line {line}: the metric prefix in {text[:60]!r}")
        found += [f"line {line}: alert {m} in {text[:60]!r}" for m in alerts.findall(text)]
    return found


def test_the_literal_check_sees_alert_names_and_the_prefix():
    assert named_literals('x = "kafka_compaction_source_up"') and named_literals('f"{a}: CompactionLagging"')
    assert named_literals('alerting(a, "TombstonesPilingUp", k)')
    assert not named_literals('"""CompactionLagging, in prose."""\nx = f"{ALERT.CompactionLagging}: held"')


def test_edges_take_alert_names_and_the_metric_prefix_from_their_one_definition():
    """A dashboards/, collectors/, cli/ or alerts/ module that spells an alert name or the metric prefix
    itself would silently match nothing after a rename; it imports them (``monitor.contract.rules.ALERT``,
    ``monitor.contract.metricnames``) instead."""
    for package in NAMED_ONCE:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if rel in NAMED_ONCE_EXEMPT:
                continue
            found = named_literals(path.read_text())
            assert not found, f"{rel}: {found}"


# ---------------------------------------------------------------- no import circles

def import_graph(packages=OURS) -> dict[str, set[str]]:
    """Each module of ``packages`` -> the modules of ours it imports (every import, at module level or in
    a function; ``from X import n`` counted as an import of the module X.n when there is one, else of X;
    a package's ``__init__``, which Python runs before any module in it, only where it is named)."""
    files = {}
    for package in sorted(packages):
        for path in sorted((ROOT / package).rglob("*.py")):
            files[_module_name(path)] = path
    graph = {}
    for module, path in files.items():
        out = set()
        for name in imports(path.read_text(), module, path.name == "__init__.py", names=True):
            # X.n, else X (a name of module X); neither: not ours, or no source (the C decoder, an .so)
            found = next((m for m in (name, name.rpartition(".")[0]) if m in files), None)
            if found is not None and found != module:
                out.add(found)
        graph[module] = out
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that import one another (Tarjan's strongly connected
    components, iteratively), as the modules in import order from the group's first by name, sorted."""
    index, low, stack, on, groups = {}, {}, [], set(), []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.add(w)
                    if w == v:
                        break
                if len(group) > 1 or v in graph.get(v, ()):
                    groups.append(group)
    return sorted(_circle(graph, g) for g in groups)


def _circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest way round from the group's first module back to it, within the group."""
    start = min(group)
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for w in sorted(graph.get(path[-1], ())):
            if w == start:
                return path
            if w in group and w not in seen:
                seen.add(w)
                paths.append(path + [w])
    return [start]


def test_no_modules_import_one_another_in_a_circle():
    """A circle (a imports b, b imports a, at module level or in a function) leaves which module is
    loaded first to whichever is imported first, and neither can be read or moved without the other: the
    piece both need goes where both import it one way."""
    circles = import_cycles(import_graph())
    assert not circles, "import circles: " + "; ".join(" -> ".join([*c, c[0]]) for c in circles)


def test_the_circle_finder_names_a_made_up_circle_and_passes_a_tree():
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set(), "e": {"a", "e"}, "f": {"g"}, "g": {"f"}}
    assert import_cycles(graph) == [["a", "b", "c"], ["e"], ["f", "g"]]
    assert import_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    src = "from monitor.settings import config, valuecheck\ndef f():\n    from .jmxtemplate import shown\n"
    assert imports(src, "monitor.settings.x", names=True) == {
        "monitor.settings.config", "monitor.settings.valuecheck", "monitor.settings.jmxtemplate.shown"}
    made = import_graph({"monitor"})
    assert "monitor.settings.configmodel" in made["monitor.settings.config"]  # a function-level import too:
    assert "monitor.settings.configfile" in made["monitor.settings.config"]  # load_config's
