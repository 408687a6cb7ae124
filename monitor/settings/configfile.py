"""``monitor.yaml`` read from disk, safely: only a regular file of UTF-8 text, bounded in bytes and in
values once YAML's aliases are expanded.

Apart from its parsing into a Config (``monitor.settings.config``): this is the one place that opens
the file, so every way a file can be wrong (a FIFO, a folder, a billion laughs) is named here.
"""

from __future__ import annotations

import os
from pathlib import Path

from monitor.fileio.regularfile import os_reason
from monitor.settings.configmodel import ConfigError

MAX_CONFIG_BYTES = 1 << 20  # a monitor.yaml is a few KB; more is some other file
MAX_CONFIG_NODES = 100_000  # values after YAML's aliases are expanded (a "billion laughs" file stops here)


def read_config_data(path: str | Path):
    """``monitor.yaml`` parsed, as written (references unresolved). Only a regular file of UTF-8 text
    is read (a FIFO would block, a device never end), at most ``MAX_CONFIG_BYTES``."""
    import stat

    import yaml

    path = Path(path)
    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)) as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise ConfigError("(file)", f"not a regular file ({_file_kind(mode)})", str(path))
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except IsADirectoryError:  # Python's open refuses a folder itself: named as any other non-file
        raise ConfigError("(file)", "not a regular file (a directory)", str(path)) from None
    except OSError as exc:  # the errno as the system names it: "too many levels of symbolic links"
        raise ConfigError("(file)", f"cannot read: {os_reason(exc)}", str(path)) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError("(file)", f"larger than {MAX_CONFIG_BYTES} bytes: not a monitor.yaml", str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("(file)", f"not UTF-8 text (byte {exc.start})", str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError("(yaml)", str(exc).replace("\n", " "), str(path)) from None
    if _nodes(data, MAX_CONFIG_NODES) > MAX_CONFIG_NODES:
        raise ConfigError("(yaml)", f"more than {MAX_CONFIG_NODES} values once aliases are expanded", str(path))
    return data


def _file_kind(mode: int) -> str:
    import stat

    return next((name for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                                         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                                         (stat.S_ISSOCK, "a socket")) if test(mode)), "not a file")


def _nodes(data, limit: int) -> int:
    """How many values ``data`` holds with shared ones counted each time (stops past ``limit``)."""
    count, stack = 0, [data]
    while stack and count <= limit:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count
