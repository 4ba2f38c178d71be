"""Metadata veto: reasons to drop a raw post or comment before any text work (pure).

Each predicate reads Reddit's raw ``data`` dict as any source hands it over. Field presence
varies across eras of the API and the dumps, so every read tolerates missing or oddly typed
values. ``veto_post`` applies them in the seed's order (section 8) and names the reason.
"""

from __future__ import annotations

from typing import Any

from crowdsift.core.models import RejectReason
from crowdsift.core.source import AUTOMODERATOR, DELETED_MARKERS, RawThing


def _flag(raw: RawThing, key: str) -> bool:
    """Reddit booleans arrive as bools, but old dumps also carry 0/1 and "true"/"false"."""
    value: Any = raw.get(key)
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes"}
    return bool(value)


def _text(raw: RawThing, key: str) -> str:
    value = raw.get(key)
    return value.strip() if isinstance(value, str) else ""


def is_deleted_or_removed(raw: RawThing, *, text_key: str = "selftext") -> bool:
    """Deleted or removed text, or a removal recorded by Reddit or its moderators.

    An author shown as ``[deleted]`` is not deleted text: Reddit keeps showing what a person
    wrote after they close their account, and old threads' best-voted replies are often theirs
    (the text carries no author to pseudonymise; ``core.privacy`` treats it as authorless)."""
    return (
        _text(raw, text_key).lower() in DELETED_MARKERS
        or _text(raw, "title").lower() in DELETED_MARKERS
        or bool(raw.get("removed_by_category"))
    )


def is_auto_moderator(raw: RawThing) -> bool:
    return _text(raw, "author").lower() == AUTOMODERATOR


def is_self_post(raw: RawThing) -> bool:
    """A text post. Old dumps may lack ``is_self``: a ``self.<sub>`` domain also says so."""
    if "is_self" in raw:
        return _flag(raw, "is_self")
    return _text(raw, "domain").lower().startswith("self.")


def is_nsfw(raw: RawThing) -> bool:
    return _flag(raw, "over_18")


def is_ad(raw: RawThing) -> bool:
    return _flag(raw, "promoted") or _flag(raw, "is_created_from_ads_ui")


def veto_post(raw: RawThing) -> RejectReason | None:
    """The first veto a raw submission fails, in the seed's order, or None if it passes."""
    if is_deleted_or_removed(raw):
        return RejectReason.DELETED_OR_REMOVED
    if is_auto_moderator(raw) or not is_self_post(raw):
        return RejectReason.METADATA_VETO
    if is_nsfw(raw) or is_ad(raw):
        return RejectReason.NSFW_OR_AD
    return None


def veto_comment(raw: RawThing) -> RejectReason | None:
    """Comment vetoes: deleted/removed body or author, AutoModerator, NSFW flags, mod stickies."""
    if is_deleted_or_removed(raw, text_key="body"):
        return RejectReason.DELETED_OR_REMOVED
    if is_auto_moderator(raw) or (
        _text(raw, "distinguished") == "moderator" and _flag(raw, "stickied")
    ):
        return RejectReason.METADATA_VETO
    if is_nsfw(raw):
        return RejectReason.NSFW_OR_AD
    return None
