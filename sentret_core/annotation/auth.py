"""Input checks, annotator names, scrypt hashes of personal secrets, and the admin token (SENTRET_ADMIN_TOKEN).

An annotator's name is normalised once (NFKC, trimmed, inner white space collapsed) and compared by
its *key*, the case-folded name: "Alice " and "alice" are one annotator. A personal secret is a
sign-in token (``<annotator id>.<random>``, for the sign-in link) and a passphrase; both are stored
only as scrypt hashes, checked by recomputing the hash and comparing with ``hmac.compare_digest``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import operator
import os
import secrets
import unicodedata
from datetime import datetime, timezone
from typing import SupportsIndex, cast

from sentret_core.annotation.records import ADMIN_TOKEN_ENV, GRADES, INT64_MAX, MAX_NAME, MAX_NOTE
from sentret_core.errors import SentretError


def timestamp_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def clean_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SentretError(f"the {what} must be a non-empty text; got {value!r}")
    name = value.strip()
    if len(name) > MAX_NAME or any(ord(ch) < 32 or 0xD800 <= ord(ch) <= 0xDFFF for ch in name):
        raise SentretError(
            f"the {what} must be at most {MAX_NAME} characters without control characters or lone surrogates"
        )
    return name


def check_grade(grade: object) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in GRADES:
        raise SentretError(
            "a grade must be 1 (non-relevant), 2 (fairly relevant), 3 (relevant) "
            f"or 4 (very relevant); got {grade!r}"
        )
    return grade


def check_note(note: object) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str):
        raise SentretError(f"a note must be text; got {type(note).__name__}")
    if len(note) > MAX_NOTE:
        raise SentretError(f"a note must be at most {MAX_NOTE} characters; got {len(note)}")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in note):
        raise SentretError("a note must be valid Unicode text (it holds a lone surrogate)")
    return note.strip() or None


def as_id(value: object, what: str) -> int:
    """An id SQLite can store: an integer in [0, 2**63 − 1]; SentretError otherwise."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise SentretError(f"{what} must be an integer; got {str(value)[:40]!r}")
    number = operator.index(cast(SupportsIndex, value))  # numpy integers too
    if not 0 <= number <= INT64_MAX:
        shown = str(number) if abs(number) < 10**30 else f"a {len(str(abs(number)))}-digit number"
        raise SentretError(f"{what} must be an integer from 0 to {INT64_MAX} (2**63 − 1); got {shown}")
    return number


# ----------------------------------------------------------------------------- annotator names


def normalise_name(value: object) -> str:
    """An annotator's name as stored and shown: NFKC, trimmed, inner white space one space.

    SentretError for an empty name, one over MAX_NAME characters, or one with control or invisible
    format characters (a zero-width space would make "alice" and "alice\u200b" look the same).
    """
    if not isinstance(value, str):
        raise SentretError(f"the annotator name must be text; got {type(value).__name__}")
    name = " ".join(unicodedata.normalize("NFKC", value).split())
    if not name:
        raise SentretError("the annotator name must not be empty")
    if len(name) > MAX_NAME:
        raise SentretError(f"the annotator name must be at most {MAX_NAME} characters; got {len(name)}")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs", "Cn") for ch in name):
        raise SentretError("the annotator name must not contain control or invisible characters")
    return name


def name_key(value: object) -> str:
    """What names are compared by: the normalised name, case-folded (unique per session)."""
    return unicodedata.normalize("NFKC", normalise_name(value).casefold())


_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1


def hash_passphrase(passphrase: str) -> str:
    """``scrypt$n$r$p$salt$digest`` with a random 16-byte salt."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        passphrase.encode("utf-8", "surrogatepass"), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32
    )
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${salt.hex()}${digest.hex()}"


def passphrase_matches(passphrase: str, stored: str | None) -> bool:
    """Recompute the hash with the stored salt and compare in constant time.

    Without a stored hash, a hash of the same cost is still computed (and the answer is False), so
    that the time taken does not tell whether a name or a secret exists.
    """
    if not stored or stored.count("$") != 5:
        hash_passphrase(passphrase)
        return False
    _, n, r, p, salt, digest = stored.split("$")
    expected = bytes.fromhex(digest)
    given = hashlib.scrypt(
        passphrase.encode("utf-8", "surrogatepass"),
        salt=bytes.fromhex(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=len(expected),
    )
    return hmac.compare_digest(given, expected)


MAX_SECRET = 1024  # longer sign-in tokens and passphrases are refused before any hashing


def new_token(annotator_id: int) -> str:
    """A sign-in token: ``<annotator id>.<32 random bytes, URL-safe>`` (the id says which hash to check)."""
    return f"{annotator_id}.{secrets.token_urlsafe(32)}"


def split_token(token: object) -> tuple[int, str] | None:
    """``(annotator id, secret)`` of a well-formed token, else None."""
    if not isinstance(token, str) or len(token) > MAX_SECRET:
        return None
    head, dot, secret = token.strip().partition(".")
    if not dot or not secret or not head.isascii() or not head.isdigit() or len(head) > 19:
        return None
    number = int(head)
    return (number, secret) if number <= INT64_MAX else None


def new_passphrase() -> str:
    """A personal passphrase: four groups of four letters and digits (about 82 bits)."""
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "-".join("".join(secrets.choice(alphabet) for _ in range(4)) for _ in range(4))


@functools.cache
def _generated_token() -> str:
    return secrets.token_urlsafe(32)


def admin_token() -> str:
    """The admin token: ``$SENTRET_ADMIN_TOKEN`` if set, else one generated once per process."""
    return os.environ.get(ADMIN_TOKEN_ENV, "").strip() or _generated_token()
