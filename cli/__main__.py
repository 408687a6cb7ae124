"""``python -m cli ...``: the same as the ``compaction-monitor`` script (tests and the demo start
subcommands this way, with the interpreter that runs them)."""

import sys

from cli.main import main

sys.exit(main())
