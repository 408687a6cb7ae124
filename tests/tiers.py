"""The test tiers' rule: which tests are ``slow`` (``pytest -m "not slow"`` is the fast tier, the rest runs
with it in the whole suite). tests/conftest.py applies it to every collected test; tests/test_tiers.py
checks that the tiers keep matching their names.

A test of the fast tier runs in well under 0.2 s on one core: it reads and writes small files, builds
small data and calls our code in-process. A test is slow when it

- uses a fixture that starts a JVM or a server (the broker, Spark, moto: ``SLOW_FIXTURES``);
- starts a process itself (the CLI as a child, promtool, mkdocs, a Kafka tool, ...): the rule finds it
  without a mark, by following the code the test and its fixtures run through our own functions and
  classes (tests/*.py helpers, localkafka, the product's modules) down to a call that starts a process
  (``PROCESS_APIS``). A process costs 0.1-0.5 s of CPU before it does anything (a Python interpreter that
  imports the CLI, a JVM far more), and a fast tier that starts processes stops being fast as tests are
  added;
- serves HTTP on loopback or drives a Streamlit script (``SLOW_NAMES``: each costs 0.5 s and more);
- or is in a module of ``SLOW_MODULES`` (its reason beside it: tests that wait out real timeouts, or build
  big data, with nothing in their code to tell);
- or carries ``@pytest.mark.slow`` by hand.

Followed by reference, never run: the names a function's code loads (its globals, the modules it
imports, the attributes it reads of them). Calls the rule cannot see (a method of an object passed in, a
function chosen at run time) go unseen; the fast tier's guard (``conftest._no_process_in_the_fast_tier``)
makes a test that is not slow and starts a process fail, naming the mark to add.
"""

from __future__ import annotations

import _posixsubprocess
import builtins
import contextlib
import functools
import importlib
import inspect
import os
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

# Fixtures that start or drive a JVM (the broker, Spark) or a server process: slow, and their tests with them.
SLOW_FIXTURES = {"kafka", "kafka_admin", "kafka_cluster", "kafka_cleaner_off", "spark", "spark_kafka",
                 "spark_standalone", "s3_server", "audit_reference"}

PROCESS = "starts a process"
# The calls that start a process, by module: a test that reaches one of them is slow.
PROCESS_APIS = {
    "subprocess": ("Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"),
    "os": ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp",
           "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
           "spawnl", "spawnle", "spawnlp", "spawnlpe"),
    "pty": ("fork", "spawn"),
    "multiprocessing": ("Process", "Pool", "get_context"),
    "concurrent.futures": ("ProcessPoolExecutor",),
    "asyncio": ("create_subprocess_exec", "create_subprocess_shell"),
}
# Names whose use is slow wherever the code reads them (a global, an attribute, an import inside a
# function), by name because they are reached through objects the rule does not follow:
# a test that serves HTTP on loopback (serve_forever: the fault server, the collector's own /metrics) runs
# a server thread and, mostly, waits on what it is testing (a timeout, a deadline, a refresh), and its
# shutdown() waits out the server's poll (socketserver's default: 0.5 s);
# Streamlit's AppTest runs a dashboard page's script (0.5 s and up a run).
SLOW_NAMES = {
    "serve_forever": "serves HTTP on loopback (serve_forever)",
    "AppTest": "runs a Streamlit script (streamlit.testing.v1.AppTest)",
}

# Our functions the rule does not follow, and why: what they name they do not run.
NOT_FOLLOWED = {
    "cli.main.build_parser": "names every subcommand's function (set_defaults) without calling one; a test "
                             "that runs a subcommand is judged by the subcommand it runs",
    "localkafka.jars.fetch_jars": "runs Maven only when the jars are not cached yet (./dev test fetched the "
                                  "default version's; only slow tests start another)",
    "tiers.processes_started": "the fast tier's guard: it wraps the calls that start a process, to see them",
}

# Whole modules that are slow for a reason their code does not show (path under tests/ -> why).
SLOW_MODULES = {
    "test_layout.py": "parses every module of the repository and imports the packages to see what they load",
    "deploy/k8s/test_k8s_schemas.py": "checks each manifest against Kubernetes' JSON schemas (megabytes)",
    "collectors/test_recorded_pages.py": "parses real JMX exporter pages of thousands of series",
    "collectors/serving/test_runner.py": "runs the collector's refresh threads and waits on their refreshes",
}


@functools.cache
def _watched() -> dict[int, str]:
    """id(callable) -> why, for every call of ``PROCESS_APIS`` (module attributes live as long as the run)."""
    out: dict[int, str] = {}
    for module, names in PROCESS_APIS.items():
        mod = importlib.import_module(module)  # the standard library's
        for name in names:
            if hasattr(mod, name):  # the call itself, should the fast tier's guard be wrapping it now
                real = getattr(mod, name)
                out[id(getattr(real, "__wrapped__", real))] = f"{PROCESS} ({module}.{name})"
    return out


def _ours(obj) -> bool:
    """Defined in this repository (tests/*.py, localkafka, the product), not in the standard library or
    an installed package: the code the rule follows."""
    name = getattr(obj, "__module__", None)
    return isinstance(name, str) and _our_module(name, getattr(sys.modules.get(name), "__file__", None))


@functools.cache
def _our_module(name: str, path: str | None) -> bool:
    if not path:
        return False
    path = Path(path).resolve()
    return path.is_relative_to(ROOT) and ".venv" not in path.relative_to(ROOT).parts


def _codes(code: types.CodeType):
    """A code object and every one nested in it (inner functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


class Rule:
    """Why a function, class or fixture is slow (a sentence) or ``None``; memoized over one collection."""

    def __init__(self):
        self._seen: dict[object, str | None] = {}

    def of_function(self, func) -> str | None:
        func = inspect.unwrap(func)
        code = getattr(func, "__code__", None)
        if code is None:
            return None
        if code in self._seen:
            return self._seen[code]
        self._seen[code] = None  # a cycle (recursion) adds nothing
        why = self._of_code(code, getattr(func, "__globals__", {}))
        self._seen[code] = why
        return why

    def of_class(self, cls) -> str | None:
        if cls in self._seen:
            return self._seen[cls]
        self._seen[cls] = None
        why = None
        for klass in cls.__mro__:
            if not _ours(klass):
                continue
            for attr in vars(klass).values():
                if isinstance(attr, (staticmethod, classmethod)):
                    attr = attr.__func__
                elif isinstance(attr, property):
                    attr = attr.fget
                if isinstance(attr, types.FunctionType):
                    why = self.of_function(attr)
                    if why:
                        why = f"{cls.__module__}.{cls.__qualname__}.{attr.__name__} -> {why}"
                        break
            if why:
                break
        self._seen[cls] = why
        return why

    def _of_code(self, code: types.CodeType, globs: dict) -> str | None:
        watched = _watched()
        codes = list(_codes(code))
        for c in codes:
            for name in c.co_names:
                if name in SLOW_NAMES:
                    return SLOW_NAMES[name]
        later = []  # our functions and classes, followed once nothing here is slow by itself
        for c in codes:
            names = set(c.co_names)
            found = []
            for name in names:
                if name in globs:
                    found.append(globs[name])
                elif name in sys.modules and not hasattr(builtins, name):
                    found.append(sys.modules[name])  # `import subprocess` inside the function
            # the attributes it reads of the modules it names: subprocess.run, os.posix_spawn
            found += [getattr(m, a) for m in found if isinstance(m, types.ModuleType)
                      for a in names if a in vars(m)]
            for obj in found:
                real = getattr(obj, "__wrapped__", obj) if callable(obj) else obj  # the guard's wrappers too
                if id(real) in watched:
                    return watched[id(real)]
            later += found
        for obj in later:
            why = self._of_object(obj)
            if why:
                return why
        return None

    def _of_object(self, obj) -> str | None:
        if isinstance(obj, functools.partial):
            obj = obj.func
        if isinstance(obj, types.ModuleType) or not _ours(obj):
            return None
        if isinstance(obj, types.FunctionType):
            if f"{obj.__module__}.{obj.__qualname__}" in NOT_FOLLOWED:
                return None
            why = self.of_function(obj)
            return f"{obj.__module__}.{obj.__qualname__} -> {why}" if why else None
        if isinstance(obj, type):
            return self.of_class(obj)
        return None


@functools.cache
def _under_tests(path: str) -> str | None:
    """tests/collectors/test_x.py -> "collectors/test_x.py" (None outside tests/)."""
    p = Path(path).resolve()
    return p.relative_to(TESTS).as_posix() if p.is_relative_to(TESTS) else None


def why_slow(item, rule: Rule) -> str | None:
    """Why the collected test ``item`` is slow, or None: the rule of this module's docstring."""
    used = set(getattr(item, "fixturenames", ()))
    if used & SLOW_FIXTURES:
        return f"uses the fixture {sorted(used & SLOW_FIXTURES)[0]} (a JVM or a server)"
    module = _under_tests(str(item.path))
    if module in SLOW_MODULES:
        return SLOW_MODULES[module]
    func = getattr(item, "function", None)
    if func is not None:
        why = rule.of_function(func)
        if why:
            return f"the test: {why}"
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for name in sorted(used):
        for fixturedef in defs.get(name, ()):
            if _ours(fixturedef.func):
                why = rule.of_function(fixturedef.func)
                # a fixture set up once for a module or the session shares its cost among its tests; a
                # process is still a process (a tier without any runs without Java or a CLI child)
                if why and (fixturedef.scope == "function" or PROCESS in why):
                    return f"the fixture {name}: {why}"
    return None


@contextlib.contextmanager
def processes_started():
    """Every process started while inside, by any thread (what it runs, as far as the call says), for the
    fast tier's guard: the calls that start one are wrapped, not blocked (the test runs as it would), and
    put back on the way out. Covers subprocess (and asyncio's, which is subprocess underneath), os's
    fork/spawn/system and multiprocessing (which forks, or spawns through _posixsubprocess)."""
    started: list[str] = []
    saved = []

    def wrap(owner, name, what):
        real = getattr(owner, name, None)
        if real is None:
            return

        @functools.wraps(real)
        def recording(*args, **kwargs):
            try:
                started.append(what(*args))
            except Exception:  # noqa: BLE001 - what it ran is for the message only
                started.append(f"{name}(...)")
            return real(*args, **kwargs)

        saved.append((owner, name, real))
        setattr(owner, name, recording)

    wrap(subprocess.Popen, "_execute_child", lambda _self, args, *_: _argv(args))
    wrap(_posixsubprocess, "fork_exec", lambda args, *_: _argv(args))
    for name in ("posix_spawn", "posix_spawnp"):
        wrap(os, name, lambda path, argv, *_: _argv(argv))
    for name in ("fork", "forkpty"):
        wrap(os, name, lambda *_, n=name: f"os.{n}()")
    wrap(os, "system", lambda command, *_: str(command))
    try:
        yield started
    finally:
        for owner, name, real in reversed(saved):
            setattr(owner, name, real)


def _argv(args) -> str:
    if isinstance(args, (str, bytes, os.PathLike)):
        return os.fsdecode(args)
    return " ".join(os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in args)[:120]
