"""Reading the settings tree once, and saying in one line per variable what is wrong with it.

``load_settings`` turns pydantic's ``ValidationError`` — from the root or from a section —
into a ``ConfigError`` whose every line names the environment variable the user set (not our
field name), the value as given (redacted for secrets, cut when long) and what is expected.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, get_args

import annotated_types
from pydantic import AliasChoices, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.config.scoring import ScoringConfig
from crowdsift.core.config.settings import Settings
from crowdsift.core.errors import ConfigError
from crowdsift.core.log import get_logger

log = get_logger(__name__)
LEGACY_FILES = ("author_salt", "crowdsift.sqlite", "archive.sqlite", "demo-archive.sqlite")
"""What crowdsift wrote straight into the home directory while it read ``HOME`` as
``CROWDSIFT_HOME`` (``core.config.env_source``)."""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment (ConfigError if invalid)."""
    return load_settings()


def load_settings() -> Settings:
    """Settings from the environment; a bad value is a ConfigError with one line per variable
    (see ``settings_error_message``), never a pydantic traceback."""
    try:
        settings = Settings()
    except ValidationError as exc:
        raise ConfigError(settings_error_message(exc)) from None
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no passwd entry (some containers): nothing to look at
        return settings
    warn_about_legacy_home(settings, home)
    return settings


def warn_about_legacy_home(settings: Settings, home: Path) -> list[str]:
    """Earlier versions kept their data in the home directory itself; when that data is there
    and the data directory is not, say how to keep using it (nothing is moved for the user).
    Returns the files found."""
    if settings.home is not None or settings.data_dir.exists():
        return []
    found = [name for name in LEGACY_FILES if (home / name).is_file()]
    if "author_salt" not in found:
        return []
    log.warning(
        "data_dir_moved",
        found=[str(home / name) for name in found],
        data_dir=str(settings.data_dir),
        note=f"crowdsift now keeps its data in {settings.data_dir}; move these files there, "
        f"or set CROWDSIFT_HOME={home} to keep using them where they are",
    )
    return found


def settings_error_message(exc: ValidationError) -> str:
    """One line per bad variable: its environment name (what the user set, not our field
    name), the value as given (redacted for secrets, cut when long), and what is expected."""
    fields = _fields_by_name()
    lines = []
    for error in exc.errors():
        loc = error.get("loc") or ("",)
        # a section given as a mapping, under its name or an older one
        if len(loc) > 1 and (loc[0] in SECTIONS or loc[0] in OLDER_SECTION_NAMES):
            loc = loc[1:]
        name, field = fields.get(str(loc[0]).lower(), (str(loc[0]).upper() or "settings", None))
        value = error.get("input")
        shown = "<redacted>" if field is not None and _is_secret(field) else _shown(value)
        expected = _expected(str(error.get("msg", "invalid")))
        # A value that did not even parse has not met its limits yet: name them too.
        unparsed = str(error.get("type", "")).endswith(("_parsing", "_type"))
        bounds = _bounds(field) if field is not None and unparsed else ""
        lines.append(f"{name}={shown}: {expected}{f' (allowed: {bounds})' if bounds else ''}")
    return "\n".join(lines)


def env_name(field_name: str) -> str:
    """The environment variable that sets ``field_name`` (its first alias)."""
    return _env_name(field_name, Settings.model_fields[field_name])


def _env_name(field_name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    if isinstance(alias, AliasChoices) and isinstance(alias.choices[0], str):
        return alias.choices[0]
    return alias if isinstance(alias, str) else field_name.upper()


OLDER_SECTION_NAMES = {"sidecar": "reddit"}
"""Sections renamed since: the old name still sets the section (``Settings(sidecar=...)``)."""

SECTIONS: dict[str, type[BaseSettings]] = {
    "reddit": RedditConfig,
    "experts": ExpertsConfig,
    "scoring": ScoringConfig,
}
"""The typed sections of the tree, by their field name on ``Settings``."""


def _fields_by_name() -> dict[str, tuple[str, FieldInfo]]:
    """Every spelling a value arrives under (env names, field names), lower-cased, to the
    variable's name and the field — the root's and every section's."""
    found: dict[str, tuple[str, FieldInfo]] = {}
    fields = [
        *(item for section in SECTIONS.values() for item in section.model_fields.items()),
        *((name, field) for name, field in Settings.model_fields.items() if name not in SECTIONS),
    ]
    for field_name, field in fields:
        env = _env_name(field_name, field)
        found[field_name] = (env, field)
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        for choice in choices:
            if isinstance(choice, str):
                found[choice.lower()] = (env, field)
    return found


def _is_secret(field: FieldInfo) -> bool:
    return field.annotation is SecretStr or SecretStr in get_args(field.annotation)


def _expected(message: str) -> str:
    """Pydantic's message without its subject: "should be greater than 0"."""
    for subject in ("Input ", "String ", "Value error, "):
        message = message.removeprefix(subject)
    return message


def _shown(value: Any) -> str:
    """The value as given (text quoted, as from the environment); long values are cut."""
    text = value if isinstance(value, str) else repr(value)
    cut = text if len(text) <= 60 else text[:57] + "..."
    return repr(cut) if isinstance(value, str) else cut


def _bounds(field: FieldInfo) -> str:
    """The numeric and length limits of a field, e.g. ">= 1, <= 32"."""
    signs = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    parts = []
    for meta in field.metadata:
        for attr, sign in signs.items():
            limit = getattr(meta, attr, None)
            if limit is not None:
                parts.append(f"{sign} {limit}")
        if isinstance(meta, annotated_types.MinLen):
            parts.append(f"at least {meta.min_length} characters")
        if isinstance(meta, annotated_types.MaxLen):
            parts.append(f"at most {meta.max_length} characters")
    return ", ".join(parts)
