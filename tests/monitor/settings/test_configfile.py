"""monitor.yaml read from disk (monitor.settings.configfile): every way a file is not one is named, with the file."""

import pytest

from monitor.settings.config import ConfigError, load_config


def test_bad_yaml_and_missing_file(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("listen: [unclosed")
    with pytest.raises(ConfigError, match="m.yaml"):
        load_config(p)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_files_that_are_not_a_monitor_yaml(tmp_path):
    """A folder, a FIFO with no writer, a device, a symlink loop, binary content, an alias bomb: a message, at
    once; a folder named as the other non-files are, an errno as the system names it (not "Is a directory")."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "bin.yaml").write_bytes(b"listen: {port: 1}\n\xff\xfe\x00garbage")
    laughs = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    laughs += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (tmp_path / "laughs.yaml").write_text("\n".join(laughs) + "\n")
    (tmp_path / "big.yaml").write_bytes(b"#" * (2 << 20))
    os.symlink(tmp_path / "loop.yaml", tmp_path / "loop.yaml")
    cases = {tmp_path: "not a regular file (a directory)", fifo: "not a regular file (a FIFO)",
             tmp_path / "loop.yaml": "cannot read: too many levels of symbolic links",
             "/dev/zero": "not a regular file (a character device)", tmp_path / "bin.yaml": "not UTF-8 text (byte 18)",
             tmp_path / "laughs.yaml": "more than 100000 values once aliases are expanded",
             tmp_path / "big.yaml": "larger than 1048576 bytes"}
    for path, reason in cases.items():
        with pytest.raises(ConfigError) as exc:
            load_config(path)
        assert str(exc.value).startswith(f"{path}: ") and reason in exc.value.reason, (path, exc.value)
