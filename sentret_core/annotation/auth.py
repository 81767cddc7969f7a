"""Input checks, scrypt passphrase hashes and tokens (the admin token comes from SENTRET_ADMIN_TOKEN)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import operator
import os
import secrets
from datetime import datetime, timezone
from typing import SupportsIndex, cast

from sentret_core.annotation.records import ADMIN_TOKEN_ENV, GRADES, MAX_NAME, MAX_NOTE
from sentret_core.errors import SentretError


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _clean_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SentretError(f"the {what} must be a non-empty text; got {value!r}")
    name = value.strip()
    if len(name) > MAX_NAME or any(ord(ch) < 32 for ch in name):
        raise SentretError(
            f"the {what} must be at most {MAX_NAME} characters without control characters"
        )
    return name


def _check_grade(grade: object) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in GRADES:
        raise SentretError(
            "a grade must be 1 (non-relevant), 2 (fairly relevant), 3 (relevant) "
            f"or 4 (very relevant); got {grade!r}"
        )
    return grade


def _check_note(note: object) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str):
        raise SentretError(f"a note must be text; got {type(note).__name__}")
    if len(note) > MAX_NOTE:
        raise SentretError(f"a note must be at most {MAX_NOTE} characters; got {len(note)}")
    return note.strip() or None


def _as_id(value: object, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise SentretError(f"{what} must be an integer; got {value!r}")
    return operator.index(cast(SupportsIndex, value))  # numpy integers


_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1


def _hash_passphrase(passphrase: str) -> str:
    """``scrypt$n$r$p$salt$digest`` with a random 16-byte salt."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        passphrase.encode("utf-8"), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32
    )
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${salt.hex()}${digest.hex()}"


def _passphrase_matches(passphrase: str, stored: str) -> bool:
    """Recompute the hash with the stored salt and compare in constant time."""
    _, n, r, p, salt, digest = stored.split("$")
    expected = bytes.fromhex(digest)
    given = hashlib.scrypt(
        passphrase.encode("utf-8"),
        salt=bytes.fromhex(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=len(expected),
    )
    return hmac.compare_digest(given, expected)


@functools.cache
def _generated_token() -> str:
    return secrets.token_urlsafe(32)


def admin_token() -> str:
    """The admin token: ``$SENTRET_ADMIN_TOKEN`` if set, else one generated once per process."""
    return os.environ.get(ADMIN_TOKEN_ENV, "").strip() or _generated_token()
