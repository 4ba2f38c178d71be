"""Usernames are stored only as salted hashes: the one place that turns a name into a pseudonym.

Why a *salted* hash: a plain ``sha256(name)`` is a lookup table away from the name (anyone can
hash "some_user" and find their posts). An HMAC keyed with a secret salt kept in the data
directory still lets analysis group posts by person (same name, same salt → same pseudonym)
while a copy of the databases alone names nobody.

- ``author_hash(name, salt)``: HMAC-SHA256, hex, first 16 characters (64 bits: collisions are
  irrelevant at any archive size we handle). Names are compared case-insensitively (Reddit's
  are), so ``Some_User`` and ``some_user`` are one person. No name, ``[deleted]`` and
  ``[removed]`` have no pseudonym (None): they are nobody.
- The salt: ``CROWDSIFT_AUTHOR_SALT`` when set (several machines sharing one index must share
  it), else 32 random bytes in ``<data dir>/author_salt``, created with mode 0600 on first use.
  Losing or changing it changes every pseudonym written afterwards; old ones stay as they are.
- ``CROWDSIFT_KEEP_USERNAMES=1`` opts in to keeping names next to their hashes (archives and
  expert comment stores then hold the names too). The default keeps none.

``AuthorPolicy`` carries the salt and that choice to the write boundaries (archive writer,
expert comment rows, the filtering layer that builds ``Post.author_hash``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from crowdsift.core.config import Settings
from crowdsift.core.errors import ConfigError
from crowdsift.core.source import AUTOMODERATOR, DELETED_MARKERS

HASH_CHARS = 16
SALT_BYTES = 32
SALT_FILENAME = "author_salt"
NO_AUTHOR = DELETED_MARKERS
SYSTEM_ACCOUNTS = frozenset({AUTOMODERATOR})
"""Accounts that are machinery, not people: kept as names because the vetoes key on them."""
_NOT_PEOPLE = NO_AUTHOR | SYSTEM_ACCOUNTS
_FINGERPRINT_MESSAGE = b"crowdsift author salt fingerprint"


def author_hash(name: str | None, salt: bytes) -> str | None:
    """The pseudonym of ``name`` under ``salt``; None for no name, ``[deleted]``, ``[removed]``."""
    return _keyed_hash(name, hmac.new(salt, digestmod=hashlib.sha256))


def _keyed_hash(name: str | None, mac: hmac.HMAC) -> str | None:
    """``author_hash`` with the key schedule done once (``mac`` is copied, never updated)."""
    if not isinstance(name, str):
        return None
    normalised = name.strip().lower()
    if not normalised or normalised in NO_AUTHOR:
        return None
    digest = mac.copy()
    digest.update(normalised.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:HASH_CHARS]


def is_person(name: str | None) -> bool:
    """True when ``name`` names a person: not empty, not a deletion marker, not a bot account."""
    if not isinstance(name, str):
        return False
    normalised = name.strip().lower()
    return bool(normalised) and normalised not in _NOT_PEOPLE


def salt_path(data_dir: Path) -> Path:
    return data_dir / SALT_FILENAME


def load_salt(settings: Settings) -> bytes:
    """``CROWDSIFT_AUTHOR_SALT``, else the data directory's salt file (created on first use)."""
    if settings.author_salt is not None:
        value = settings.author_salt.get_secret_value()
        if value:
            return value.encode("utf-8")
    return read_or_create_salt(salt_path(settings.data_dir))


def read_or_create_salt(path: Path) -> bytes:
    """The salt in ``path``; a new random one (mode 0600) if the file does not exist yet.

    Two processes starting together must agree on one salt: the new salt is written to a
    private temporary file and hard-linked into place, which fails if another process got
    there first; then theirs is read.
    """
    try:
        return _read_salt(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}")
        descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(secrets.token_bytes(SALT_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another process won: use theirs
                os.link(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return _read_salt(path)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the author salt {path}: {exc.strerror or exc}; make the data "
            "directory writable (CROWDSIFT_HOME) or set CROWDSIFT_AUTHOR_SALT"
        ) from exc


def _read_salt(path: Path) -> bytes:
    data = path.read_bytes()
    if len(data) != SALT_BYTES:
        raise ConfigError(
            f"the author salt {path} holds {len(data)} bytes, not {SALT_BYTES}: restore it from "
            "a backup, or delete it to start new pseudonyms (old author_hash values will no "
            "longer match new ones)"
        )
    return data


@dataclass(frozen=True)
class AuthorPolicy:
    """How names are stored: their salted hash always, the name itself only if opted in."""

    salt: bytes = field(repr=False)
    keep_usernames: bool = False
    _hash: Callable[[str | None], str | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The import hashes every record, and authors repeat: key HMAC once, remember names.
        mac = hmac.new(self.salt, digestmod=hashlib.sha256)
        cached = functools.lru_cache(maxsize=1 << 16)(functools.partial(_keyed_hash, mac=mac))
        object.__setattr__(self, "_hash", cached)

    @classmethod
    def from_settings(cls, settings: Settings) -> AuthorPolicy:
        return cls(load_salt(settings), keep_usernames=settings.keep_usernames)

    def hash(self, name: str | None) -> str | None:
        return self._hash(name)

    def stored_name(self, name: str | None) -> str | None:
        """What a ``author`` column may hold: the name when opted in; markers and bot accounts
        (not people, and the vetoes need them) always; nothing else."""
        if self.keep_usernames or not is_person(name):
            return name
        return None

    @property
    def fingerprint(self) -> str:
        """A public id of the salt (not the salt): tells whether two stores hashed alike."""
        digest = hmac.new(self.salt, _FINGERPRINT_MESSAGE, hashlib.sha256)
        return digest.hexdigest()[:HASH_CHARS]


def privacy_state(policy: AuthorPolicy) -> str:
    """``hashed:<salt fingerprint>`` or ``kept:<salt fingerprint>``: what a store's names are."""
    return f"{'kept' if policy.keep_usernames else 'hashed'}:{policy.fingerprint}"
