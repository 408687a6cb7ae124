"""Issue #29's "no behaviour change, proved": the outputs of main as it was before the refactor, on fixed
inputs (tests/golden/goldeninputs.py), recorded under tests/golden/ and compared exactly after the
normalisation tests/golden/goldenfiles.py states (temporary paths, loopback ports, distances to the
wall clock). Each later step of #29 runs these unchanged; a difference is either a bug of the step or a
fork that was a bug, which the step's commit names when it re-records (``GOLDEN_UPDATE=1``).

Covered: ``collect --once`` at granularity topic and partition (the fixed log dir, its cleaner log, a
recorded JMX exporter page and the session broker with the same topics, configs, offsets and a consumer
group), ``logdir --format json`` (with the cleaner log, and ``--all``), ``explain --format json`` (log dir,
cleaner log and the broker's topic configs; and with no broker), the audit's tables and summary.json
(``--now-ms`` fixed), ``rules render`` (rules and promtool tests) and ``grafana render``, with Kafka's
defaults and with a monitor.yaml's thresholds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import goldeninputs as gi
from goldenfiles import Normaliser, check

ROOT = Path(__file__).resolve().parent.parent.parent

THRESHOLDS = {"thresholds": {"cleaner_stalled_seconds": 600, "lagging_for": "45m", "buffer_utilization_ratio": 0.9}}


from clirun import Ran, run_cli
@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = _fixed_length(tmp_path_factory.mktemp("golden"))
    logs = gi.log_dir(root / "logs")
    cleaner = gi.cleaner_log(root / "log-cleaner.log")
    return root, logs, cleaner


ROOT_LENGTH = 80


def _fixed_length(base: Path) -> Path:
    """A folder under ``base`` whose path is always ROOT_LENGTH characters long. The collector cuts an
    error's text to 200 characters in its metric label before the golden replaces the temporary path,
    so how much of a message survives depends on the path's length, which differs between a serial run
    (``pytest-N/golden0``), an xdist worker's (``pytest-N/popen-gw1/golden0``) and N's digits."""
    pad = ROOT_LENGTH - len(str(base)) - 1
    assert pad >= 1, f"pytest's temporary folder {base} is longer than the goldens allow ({ROOT_LENGTH})"
    root = base / ("g" * pad)
    root.mkdir()
    return root


@pytest.fixture(scope="module")
def jmx():
    page = gi.JmxPage()
    yield page
    page.stop()


@pytest.fixture(scope="module")
def scenario(kafka):
    gi.broker_scenario(kafka.bootstrap)
    return kafka


def _normaliser(root, kafka=None, jmx=None) -> Normaliser:
    reps = {str(root): "<tmp>", str(root.resolve()): "<tmp>"}
    if kafka is not None:
        reps[kafka.bootstrap] = "<bootstrap>"
    if jmx is not None:
        reps[jmx.url.rsplit("/", 1)[0].removeprefix("http://")] = "<jmx>"
    return Normaliser(reps)


def _cli(args, cwd=None) -> Ran:
    return run_cli(*args, cwd=cwd or ROOT)


def _outcome(norm: Normaliser, r: Ran) -> str:
    """The exit code and the error lines (sorted: sources are refreshed by threads), normalised; not collect's
    INFO lines (what it watches, each refresh's counts and duration: ``collectors.serving.refresh_log``)."""
    lines = sorted(x for x in norm.text(r.stderr).splitlines() if " INFO " not in x)
    return f"exit {r.returncode}\n" + "".join(f"{x}\n" for x in lines)


def _config(root, logs, cleaner, kafka=None, jmx=None, granularity="topic") -> dict:
    broker = {"id": gi.NODE_ID, "log_dirs": [str(logs)], "cleaner_log": str(cleaner)}
    if jmx is not None:
        broker["jmx_url"] = jmx.url
    cluster = {"name": "golden", "brokers": [broker], "topics": dict(gi.DISK_ONLY_CONFIGS)}
    if kafka is not None:
        cluster["bootstrap_servers"] = kafka.bootstrap
    else:
        cluster["topics"].update(gi.TOPICS)
    return {"clusters": [cluster], "granularity": granularity, "topics_allow": [gi.PREFIX + ".*"],
            **THRESHOLDS}


def _write_config(path, cfg: dict):
    path.write_text(yaml.safe_dump(cfg))
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("granularity", ["topic", "partition"])
def test_collect_once_pages(inputs, jmx, scenario, granularity):
    root, logs, cleaner = inputs
    cfg = _write_config(root / f"collect-{granularity}.yaml",
                        _config(root, logs, cleaner, scenario, jmx, granularity))
    r = _cli(["collect", "--once", "--config", str(cfg)])
    norm = _normaliser(root, scenario, jmx)
    check(f"collect-{granularity}.prom", norm.exposition(r.stdout))
    check(f"collect-{granularity}.outcome", _outcome(norm, r))


@pytest.mark.parametrize("name, extra", [("logdir", []), ("logdir-all", ["--all"])])
def test_logdir_json(inputs, name, extra):
    root, logs, cleaner = inputs
    cfg = _write_config(root / "logdir.yaml", _config(root, logs, cleaner))
    r = _cli(["logdir", str(logs), "--format", "json", "--config", str(cfg), "--cleaner-log", str(cleaner), *extra])
    norm = _normaliser(root)
    check(f"{name}.json", norm.json_text(json.loads(r.stdout)))
    check(f"{name}.outcome", _outcome(norm, r))


def test_explain_json_with_the_broker(inputs, scenario):
    root, logs, cleaner = inputs
    r = _cli(["explain", "--log-dir", str(logs), "--bootstrap-server", scenario.bootstrap, "--cleaner-log",
              str(cleaner), *[f"--topic-config={t}:{k}={v}" for t, cfg in gi.DISK_ONLY_CONFIGS.items() for k, v in cfg.items()],
              "--format", "json"])
    norm = _normaliser(root, scenario)
    check("explain-broker.json", norm.json_text(json.loads(r.stdout)))
    check("explain-broker.outcome", _outcome(norm, r))


def test_explain_json_without_a_broker(inputs):
    root, logs, cleaner = inputs
    cfg = _write_config(root / "explain.yaml", _config(root, logs, cleaner))
    r = _cli(["explain", "--config", str(cfg), "--format", "json"])  # log dirs and cleaner log from the config
    norm = _normaliser(root)
    check("explain.json", norm.json_text(json.loads(r.stdout)))
    check("explain.outcome", _outcome(norm, r))


def test_audit_tables_and_summary(inputs, spark):
    import pyarrow.fs as pafs

    from auditcompare import read_run
    from monitor.settings.config import load_config
    from spark_analysis.job import build_parser, run

    root, logs, cleaner = inputs
    cfg = _write_config(root / "audit.yaml", _config(root, logs, cleaner))
    out = root / "audit"
    args = build_parser().parse_args(["--input", str(logs), "--out", str(out), "--now-ms", str(gi.NOW_MS),
                                      "--config", str(cfg), "--cleaner-log", str(cleaner),
                                      # not the checkout's bench/out/restore.json, which a bench run may write
                                      "--restore-measurement", str(root / "no-restore-measurement.json")])
    base, _ = run(args, spark=spark, file_configs=dict(load_config(str(cfg)).clusters[0].topics))
    tables, summary = read_run(pafs.LocalFileSystem(), base)
    norm = _normaliser(root)
    summary["run"] = "<run>"  # named after the wall clock
    check("audit-summary.json", norm.json_text(summary))
    for name, rows in tables.items():
        text = "".join(json.dumps(norm.data(r), sort_keys=True, default=str) + "\n" for r in rows)
        check(f"audit-{name}.jsonl", "".join(sorted(text.splitlines(keepends=True))))


@pytest.mark.parametrize("config", [None, "thresholds"])
def test_rules_and_grafana_render(tmp_path, config):
    args, suffix = [], ""
    if config:
        args, suffix = ["--config", str(_write_config(tmp_path / "monitor.yaml", THRESHOLDS))], f"-{config}"
    r = _cli(["rules", "render", "--out", str(tmp_path / "rules.yml"), "--tests", str(tmp_path / "tests.yml"), *args])
    assert r.returncode == 0, r.stderr
    norm = _normaliser(tmp_path)
    check(f"rules{suffix}.yml", norm.text((tmp_path / "rules.yml").read_text()))
    check(f"rules-tests{suffix}.yml", norm.text((tmp_path / "tests.yml").read_text()))
    g = _cli(["grafana", "render", *args])
    assert g.returncode == 0, g.stderr
    check(f"grafana{suffix}.json", g.stdout)


def test_a_distance_to_now_written_in_a_sentence_is_normalised():
    """A day later the same inputs say 1108.9 d where the golden says 1107.9 d (CI's first run of these
    goldens failed on it): the number goes, the sentence and every other number stay."""
    norm = Normaliser({})
    later = norm.text("one-shot: 460 bytes of the dirty section over the 1108.9 d since its first batch's timestamp")
    assert later == "one-shot: 460 bytes of the dirty section over the <now> since its first batch's timestamp"
    hanging = norm.text("a hanging transaction (producer 4000, open 2.5 h, longer than transaction.max.timeout.ms, "
                        "15 min) holds the last stable offset at 10")
    assert hanging == ("a hanging transaction (producer 4000, open <now>, longer than transaction.max.timeout.ms, "
                       "15 min) holds the last stable offset at 10")
