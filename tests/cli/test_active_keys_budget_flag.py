"""``collect --active-keys-budget`` (issue 43) over the config's ``timeouts.active_segment_keys_budget_bytes``, the
one setting the log-dir scanner's key-set budget is taken from; a value that is no byte count is refused on the
command line, naming the flag."""

from __future__ import annotations

import pytest

from cli.main import _exposition_flags, build_parser
from monitor.model.activekeys import DEFAULT_BUDGET_BYTES
from monitor.settings.config import Config


def _args(*extra):
    return build_parser().parse_args(["collect", "--log-dir", "/nonexistent", *extra])


def test_the_flag_overrides_the_configs_budget_and_without_it_the_config_stands():
    assert Config().timeouts.active_segment_keys_budget_bytes == DEFAULT_BUDGET_BYTES
    cfg = _exposition_flags(Config(), _args("--active-keys-budget", "4096"))
    assert cfg.timeouts.active_segment_keys_budget_bytes == 4096
    assert cfg.timeouts.active_segment_max_keys == Config().timeouts.active_segment_max_keys  # the rest kept
    assert _exposition_flags(Config(), _args()).timeouts.active_segment_keys_budget_bytes == DEFAULT_BUDGET_BYTES


@pytest.mark.parametrize("bad", ["0", "-1", "1.5", "lots"])
def test_a_budget_that_is_no_byte_count_is_refused_naming_the_flag(bad, capsys):
    with pytest.raises(SystemExit):
        _args("--active-keys-budget", bad)
    assert "--active-keys-budget" in capsys.readouterr().err
