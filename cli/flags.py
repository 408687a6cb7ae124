"""argparse types for the flags that take a port, a URL, bootstrap servers, seconds, a count, a path or a
listen address.

Each runs the check ``monitor.settings.valuecheck`` defines (the one ``monitor.yaml``'s keys get too) while
argparse reads the command line, so a bad value stops the command before any work, in one line that
names the flag and the value (a URL's password as ``***``), exit 2 (``cli.main.Parser``):

    compaction-monitor collect: error: argument --port: expected a port from 0 to 65535 (0: any), got '70000' (out of range)
"""

from __future__ import annotations

from monitor.settings.jmxtemplate import template_problem
from monitor.settings.valuecheck import (address_problem, bootstrap_problem, flag_type, number_type, path_text_problem,
                                         port_problem, url_problem)

port = flag_type(port_problem, lambda t: int(t.strip()))
url = flag_type(url_problem, str)
jmx_url_template = flag_type(template_problem, str)
bootstrap = flag_type(bootstrap_problem, str)
seconds = number_type("a finite number of seconds above 0", above=0)
count = number_type("a whole number, at least 1", whole=True, minimum=1)
path = flag_type(path_text_problem, str)
address = flag_type(address_problem, str)
bytes_per_second = number_type("a finite number of bytes per second, at least 0 (0: unlimited)", minimum=0)
byte_count = number_type("a whole number of bytes, at least 1", whole=True, minimum=1)
