"""The core's bottom layer: files read and written safely, whatever is on the disk.

Only regular files are opened (``regularfile``: a FIFO or a device is refused, naming the path), an error
quotes bad content as a short escaped excerpt, never whole (``excerpt``), and every JSON the project
writes is strict (``strictjson``: no NaN or Infinity).

May import: the standard library only (no other layer of the core).
"""
