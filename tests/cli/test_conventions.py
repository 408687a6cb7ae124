"""One convention for the whole command line (issue #33, point 3), held by a walk over every subcommand
and action the parser has (a new one is walked too): its help exits 0 with an example and the defaults,
every flag has help, a cluster is ``--bootstrap-server`` (the plural accepted, never shown), log dirs are
``--log-dir``, a report's ``--format`` is ``text|json``, ``--version`` and ``--log-level`` exist, a
mistyped subcommand or flag says what was meant and whose help to read (exit 2), and every flag that
takes a port, URL, bootstrap servers, number, path or address refuses a bad one before any work, in one
line, exit 2.

``main`` is run in this process (no subprocess: each case takes milliseconds); an uncaught exception (a
traceback for a user) fails the test as it would show. The cases the issue lists under "Why" each have a
test below that failed on 0.1.0's command line."""

from __future__ import annotations

import argparse
import importlib.util
import io
import logging
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cli.main import build_parser, main
from cli.parser import hidden, leaves
from cli.parsing import FORMATS, LOG_LEVELS, HelpFormatter, subparsers

ROOT = Path(__file__).resolve().parents[2]
PARSER = build_parser()
LEAVES = dict(leaves(PARSER))
HIDDEN = hidden(PARSER)
PROG = "compaction-monitor"


def call(*argv: str) -> tuple[int, str, str, int]:
    """``compaction-monitor ARGV`` in this process: exit code, stdout, stderr, and the root logger's level
    as the command left it (the logging set-up is undone after)."""
    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:
                code = exc.code
        level = root.level
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
    return code, out.getvalue(), err.getvalue(), level


def one_line(code: int, err: str) -> str:
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def visible(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.help is not argparse.SUPPRESS]


def option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return parser._option_string_actions.get(flag)


def groups(parser: argparse.ArgumentParser, path=()):
    """Every parser a user can ask ``--help`` of: the top level, the families (broker, topics), the leaves."""
    yield path, parser
    sub = subparsers(parser)
    for name, child in (sub.choices.items() if sub else ()):
        if (*path, name) not in LEAVES:
            yield from groups(child, (*path, name))


# ---------------------------------------------------------------- the walk


def test_the_walk_reaches_every_subcommand_and_action():
    assert {("inspect",), ("logdir",), ("explain",), ("topics", "lint"), ("collect",), ("audit",), ("dashboard",),
            ("demo",), ("rules",), ("grafana",), ("config",), ("broker", "start"), ("broker", "dump-log")} <= set(LEAVES)
    assert HIDDEN == {("check-config",)}, "a hidden subcommand is an alias: say which in cli.parsing.ALIASES"


@pytest.mark.parametrize("path", sorted(LEAVES) + sorted(p for p, _ in groups(PARSER) if p not in LEAVES),
                         ids=lambda p: " ".join(p) or "(top)")
def test_help_exits_0_with_an_example_and_the_defaults(path):
    code, out, err, _ = call(*path, "--help")
    assert code == 0 and err == "", err
    assert f"usage: {PROG}" in out
    assert "example" in out and f"  {PROG} " in out.split("example", 1)[1], out  # an example, as typed
    assert "--bootstrap-servers" not in out and ("check-config" not in out or path in HIDDEN)
    if path in LEAVES:
        assert "--log-level" in out
        assert "(default: " in out or all(a.default in (None, False, argparse.SUPPRESS) for a in LEAVES[path]._actions)


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_every_flag_has_help_and_says_its_default(path):
    parser = LEAVES[path]
    fmt = HelpFormatter(PROG)
    for action in parser._actions:
        if action.help is argparse.SUPPRESS:  # a hidden alias: of a shown flag, same destination
            if action.option_strings == ["--now-ms"]:  # the audit's clock for its golden tests, not for users
                continue
            assert any(a.dest == action.dest for a in visible(parser)), (path, action.option_strings)
            continue
        assert action.help and action.help.strip(), (path, action.option_strings or action.dest)
        if action.default not in (None, False, [], argparse.SUPPRESS) and action.nargs != 0:
            assert "default" in fmt._get_help_string(action), (path, action.option_strings, action.default)


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_a_cluster_is_bootstrap_server_and_log_dirs_are_log_dir(path):
    parser = LEAVES[path]
    plural, singular = option(parser, "--bootstrap-servers"), option(parser, "--bootstrap-server")
    if plural is not None or singular is not None:
        assert singular is not None and singular.help is not argparse.SUPPRESS, path
        assert plural is not None and plural.dest == singular.dest and plural.help is argparse.SUPPRESS, path
    flags = {o for a in parser._actions for o in a.option_strings}
    assert not flags & {"--logdir", "--log-dirs", "--logdirs", "--bootstrap", "--brokers-list"}, path
    if "--log-dir" in flags:
        assert option(parser, "--log-dir").nargs is None and isinstance(option(parser, "--log-dir"),
                                                                           argparse._AppendAction), path


def test_the_commands_that_read_a_cluster_or_log_dirs_take_them_alike():
    reads_cluster = {p for p, parser in LEAVES.items() if option(parser, "--bootstrap-server")}
    assert {("explain",), ("topics", "lint"), ("check-config",), ("collect",), ("audit",)} <= reads_cluster
    reads_log_dirs = {p for p, parser in LEAVES.items() if option(parser, "--log-dir")}
    assert {("logdir",), ("explain",), ("topics", "lint"), ("collect",)} <= reads_log_dirs


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_a_reports_format_is_text_or_json_text_by_default(path):
    fmt = option(LEAVES[path], "--format")
    if fmt is None or path == ("rules",):  # rules render --format rules|prometheusrule: a file kind
        return
    assert tuple(fmt.choices) == FORMATS and fmt.default == "text", (path, fmt.choices)


def test_the_reports_have_a_format():
    assert {p for p in LEAVES if option(LEAVES[p], "--format")} >= {("inspect",), ("logdir",), ("explain",),
                                                                  ("topics", "lint")}


# ---------------------------------------------------------------- --version, --log-level


def test_version_is_the_packages():
    from cli.version import checkout_version

    code, out, err, _ = call("--version")
    assert code == 0, err
    assert out == f"{PROG} {checkout_version(ROOT / 'pyproject.toml')}\n"


def test_the_version_of_a_checkout_is_pyprojects(tmp_path):
    from cli.version import checkout_version

    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = []\n\n[project]\nname = '
                                             '"kafka-compaction-monitor"\nversion = "9.8.7"\n[tool.x]\nversion = "1"\n')
    assert checkout_version(tmp_path / "pyproject.toml") == "9.8.7"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "1.0"\n')
    assert checkout_version(tmp_path / "pyproject.toml") is None


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_every_subcommand_takes_log_level(path):
    action = option(LEAVES[path], "--log-level")
    assert action is not None and tuple(action.choices) == LOG_LEVELS, path


def test_log_level_before_or_after_the_subcommand_sets_the_root_logger(tmp_path):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - name: c1\n")
    assert call("config", "check", str(cfg))[3] == logging.WARNING  # a one-shot command's default
    assert call("--log-level", "debug", "config", "check", str(cfg))[3] == logging.DEBUG
    assert call("config", "check", str(cfg), "--log-level", "error")[3] == logging.ERROR
    assert call("--log-level", "debug", "config", "check", str(cfg), "--log-level", "info")[3] == logging.INFO


def test_log_level_before_or_after_audit():
    from cli.main import audit_args

    base = ["--input", "x", "--out", "y"]
    assert audit_args(build_parser(), ["--log-level", "debug", "audit", *base]).log_level == "debug"
    assert audit_args(build_parser(), ["audit", *base, "--log-level", "error"]).log_level == "error"
    assert audit_args(build_parser(), ["audit", *base]).log_level is None  # the default: warning


def test_collect_logs_at_info_by_default():
    from cli.logsetup import default_level

    assert default_level("collect") == "info" and default_level("explain") == "warning"
    assert default_level("collect", once=True) == "warning"  # collect --once is a one-shot command


# ---------------------------------------------------------------- did you mean


def _typo(flag: str) -> str:
    """``--config`` -> ``--confgi``: the last two letters swapped (no prefix of another flag)."""
    return flag[:-2] + flag[-1] + flag[-2]


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_a_mistyped_flag_says_the_one_meant_and_the_subcommands_help(path):
    parser = LEAVES[path]
    flags = [o for a in visible(parser) for o in a.option_strings
             if o.startswith("--") and o not in ("--help", "--log-level") and len(o) > 5]
    if not flags:
        pytest.skip("no flag of its own")
    flag = max(flags, key=len)
    assert _typo(flag) != flag
    code, out, err, _ = call(*path, _typo(flag))
    line = one_line(code, err)
    assert f"did you mean {flag}?" in line and line.endswith(f"(see {PROG} {' '.join(path)} --help)"), line


@pytest.mark.parametrize("typed, meant", [(["explian"], "explain"), (["colect"], "collect"),
                                          (["check-confg"], "topics lint"), (["topics", "lnit"], "topics lint"),
                                          (["broker", "strat"], "broker start")])
def test_a_mistyped_subcommand_says_the_one_meant_and_its_help(typed, meant):
    line = one_line(*call(*typed)[::2])
    assert f"did you mean {meant.split()[-1]!r}?" in line or f"did you mean {meant!r}?" in line, line
    assert line.endswith(f"(see {PROG} {meant} --help)"), line


def test_a_mistyped_choice_says_the_one_meant():
    line = one_line(*call("explain", "--format", "jsno")[::2])
    assert "did you mean 'json'?" in line and "(choose from text, json)" in line and "table" not in line, line


# ---------------------------------------------------------------- bad values: one line, exit 2, before any work

# a bad value of each kind of check a flag can run (monitor.settings.valuecheck, and jmxtemplate's), by the check
BAD = {"port_problem": "99999", "url_problem": "http://kafka..1:7071/metrics", "bootstrap_problem": "kafka..1:9092",
       "number_problem": "nan", "path_text_problem": "", "address_problem": "kafka 1",
       "template_problem": "http://kafka-1:7071/metrics"}
PREFIX = {("rules",): ["render"], ("grafana",): ["render"], ("config",): ["check"]}  # a positional before the flag


def typed_flags():
    for path, parser in sorted(LEAVES.items()):
        for action in parser._actions:
            problem = getattr(action.type, "problem", None)
            if problem is not None:
                yield path, action, problem.__name__


@pytest.mark.parametrize("path, action, check", list(typed_flags()),
                         ids=[f"{' '.join(p)} {a.option_strings[0] if a.option_strings else a.dest}"
                              for p, a, _ in typed_flags()])
def test_a_bad_value_is_one_line_naming_the_flag_exit_2(path, action, check):
    value = BAD[check]
    if action.option_strings:
        argv = [*path, *PREFIX.get(path, []), action.option_strings[0], value]
        named = action.option_strings[0]
    else:
        argv = [*path, *PREFIX.get(path, []), value]
        named = action.metavar or action.dest
    line = one_line(*call(*argv)[::2])
    assert line.startswith(f"{PROG} {' '.join(path)}: error: argument {named}: expected "), line


def test_every_value_taking_flag_of_a_port_url_or_path_is_checked():
    """A flag whose name says it takes a port, URL, address, duration or path has a check (no flag is left
    to fail deep in the work, as ``collect --port 99999`` and ``--jmx-url`` did)."""
    words = ("port", "url", "address", "dir", "config", "file", "log", "out", "tests", "duration", "measurement",
             "input", "bootstrap")
    for path, parser in LEAVES.items():
        for action in parser._actions:
            name = (action.option_strings or [action.dest])[-1].lstrip("-")
            if action.nargs == 0 or name in ("log-level", "help", "input-kind", "topics-allow", "topics-deny",
                                             "topic-config"):  # TOPIC:KEY=VALUE, checked as a topic config
                continue
            if any(w in name for w in words) or action.dest in ("files", "file") or action.metavar == "PATH":
                assert getattr(action.type, "problem", None) is not None, (path, name)


# ---------------------------------------------------------------- the cases of issue #33's "Why"


def test_explain_takes_bootstrap_servers_as_collect_did(tmp_path):
    args = PARSER.parse_args(["explain", "--bootstrap-servers", "k1:9092", "--log-dir", str(tmp_path)])
    assert args.bootstrap_server == "k1:9092"
    args = PARSER.parse_args(["collect", "--bootstrap-server", "k1:9092"])  # and collect the singular
    assert args.bootstrap_server == "k1:9092"


def test_an_abbreviation_is_the_shown_flags_not_ambiguous_with_its_alias():
    assert PARSER.parse_args(["collect", "--bootstrap", "k1:9092"]).bootstrap_server == "k1:9092"


def test_logdir_takes_log_dir_as_explain_does(tmp_path):
    args = PARSER.parse_args(["logdir", "--log-dir", str(tmp_path), "--log-dir", str(tmp_path / "b")])
    assert args.log_dir == [str(tmp_path), str(tmp_path / "b")]
    line = one_line(*call("logdir")[::2])
    assert "no log dir: give PATH or --log-dir PATH" in line


def test_check_config_is_topics_lint_and_still_works():
    for path in (["topics", "lint"], ["check-config"]):
        args = PARSER.parse_args([*path, "--bootstrap-server", "k:9092", "orders"])
        assert args.func is PARSER.parse_args(["topics", "lint"]).func and args.topics == ["orders"]
    code, out, _, _ = call("--help")
    assert "topics" in out and "check-config" not in out


def test_the_old_format_words_are_still_taken():
    assert PARSER.parse_args(["inspect", "x", "--format", "jsonl"]).format == "json"
    assert PARSER.parse_args(["logdir", "x", "--format", "table"]).format == "text"
    code, out, _, _ = call("inspect", "--help")
    assert "{text,json}" in out and "jsonl" not in out and "JSON Lines" in out


def test_collect_port_99999_is_one_line_exit_2():
    line = one_line(*call("collect", "--port", "99999", "--once")[::2])
    assert "argument --port: expected a port from 0 to 65535 (0: any), got '99999' (out of range)" in line


@pytest.mark.parametrize("url, says", [("http://kafka..1:7071/metrics", "an empty label"),
                                       ("http://-kafka:7071/metrics", "begins or ends with -"),
                                       ("http://999.1.1.1:7071/metrics", "999.1.1.1 is no IPv4 address"),
                                       ("http://kafka-1:7071/metrics%zz", "a % not followed by two hex digits")])
def test_a_malformed_jmx_url_exits_2_not_1(url, says):
    """These reached the fetch and failed there (a resolver's "Name or service not known", the IDNA codec's
    "label empty or too long"): exit 1, as a broker that is down. Now usage errors, before any work."""
    line = one_line(*call("collect", "--jmx-url", url, "--once")[::2])
    assert "argument --jmx-url: expected an http:// or https:// URL" in line and says in line, line


def test_the_dashboards_flags_have_help():
    code, out, _, _ = call("dashboard", "--help")
    for flag in ("--port", "--address", "--prometheus-url", "--collector-url", "--audit-dir"):
        (line,) = [ln for ln in out.splitlines() if ln.strip().startswith(flag)]
        assert len(out.split(line, 1)[1].split("\n  --", 1)[0].strip()) > 10 or len(line.split(None, 2)) > 2, flag


def test_the_restore_measurements_default_is_none_when_installed(tmp_path, monkeypatch):
    """Installed (no pyproject.toml nor bench/ above the package) the audit has no default measurement file:
    the restore time is unknown and says how to give one, instead of naming a checkout's file that is not there."""
    from monitor.verdicts.restore import MEASUREMENT

    assert MEASUREMENT == ROOT / "bench" / "out" / "restore.json"  # in this checkout, the bench's file
    site = tmp_path / "site-packages"
    (site / "monitor" / "verdicts").mkdir(parents=True)
    shutil.copy(ROOT / "monitor" / "verdicts" / "restore.py", site / "monitor" / "verdicts" / "restore.py")
    spec = importlib.util.spec_from_file_location("monitor.verdicts.restore",
                                                  site / "monitor" / "verdicts" / "restore.py")
    installed = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "monitor.verdicts.restore", installed)  # (its dataclasses look it up)
    spec.loader.exec_module(installed)
    assert installed.MEASUREMENT is None
    got = installed.resolve()
    assert got.bytes_per_second is None and "--restore-measurement" in got.reason
    code, out, _, _ = call("audit", "--help")
    assert "installed, none" in " ".join(out.split())
