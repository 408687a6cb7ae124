"""A bcrypt hash for a web config's basic_auth_users, as `htpasswd -nBC 10` writes one."""

from __future__ import annotations

import ctypes


def bcrypt_hash(pw: str) -> str:
    """A bcrypt hash of ``pw`` (cost 10) as `htpasswd -B` would write it, by the system's crypt(3)."""
    try:
        import bcrypt

        return bcrypt.hashpw(pw.encode(), bcrypt.gensalt(10)).decode()
    except ImportError:
        lib = ctypes.CDLL("libcrypt.so.1")
        lib.crypt_gensalt.restype = lib.crypt.restype = ctypes.c_char_p
        lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
        lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        return lib.crypt(pw.encode(), lib.crypt_gensalt(b"$2y$", 10, None, 0)).decode()
