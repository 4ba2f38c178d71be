"""Reading the Creators API's answers: products as ``EvidenceItem``s, and error codes.

Pure functions, no I/O. A product becomes evidence with a canonical, untracked URL
``https://<marketplace>/dp/<ASIN>`` (the API's ``detailPageURL`` carries the partner tag);
review metrics are kept only when the API offered them. A product that is not usable (no ASIN,
no title, a field of the wrong type) raises ``BadItemError``; ``parse_search_result`` skips
it, logs the reason and counts it, and keeps every good one.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from crowdsift.core.errors import ConfigError, ResponseError
from crowdsift.core.log import get_logger
from crowdsift.sources.models import EvidenceItem

log = get_logger(__name__)

_ASIN = re.compile(r"^[A-Z0-9]{10}$")
MAX_COUNT = 2**63 - 1  # a review count past 64 bits is junk (and past ~1e308 not a float)
_HOST = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?$")
ERROR_HINTS = {  # error code → what to fix
    "InvalidPartnerTag": "AMAZON_PARTNER_TAG is not a tracking id of this marketplace's "
    "Associates store: set it to one (like yourtag-20) and check AMAZON_MARKETPLACE",
    "InvalidAssociate": "these credentials are not linked to AMAZON_PARTNER_TAG's Associates "
    "account or not valid for AMAZON_MARKETPLACE",
    "AssociateNotEligible": "the Associates account is not eligible for the Creators API yet "
    "(Amazon requires recent qualifying sales)",
    "InvalidParameterValue": "Amazon refused a request parameter; check AMAZON_MARKETPLACE",
}


class BadItemError(ValueError):
    """One product in a search answer is not usable; the reason goes to the log."""


def marketplace_host(value: str) -> str:
    """``www.amazon.de`` from ``www.amazon.de``, ``https://www.amazon.de/`` and the like."""
    host = value.strip().lower().removeprefix("https://").removeprefix("http://").strip("/")
    if not _HOST.match(host):
        raise ConfigError(
            f"AMAZON_MARKETPLACE={value!r} is not a marketplace host: set it to one like "
            "www.amazon.com or www.amazon.de."
        )
    return host


# --- parsing ---------------------------------------------------------------------------------


def canonical_url(marketplace: str, asin: str) -> str:
    """The product page without tracking: what a reader can open to check a claim."""
    return f"https://{marketplace}/dp/{asin}"


def parse_search_result(body: Any, marketplace: str, *, url: str) -> tuple[list[EvidenceItem], int]:
    """The good products of a search answer and how many were skipped.

    No results arrive as a 404 (``body`` None) or as a body without ``searchResult``.
    """
    if body is None:
        return [], 0
    if not isinstance(body, dict):
        raise ResponseError(
            f"POST {url} answered {type(body).__name__}, not a JSON object: is "
            "AMAZON_API_BASE_URL the Creators API?"
        )
    result = body.get("searchResult")
    raw_items = result.get("items") if isinstance(result, dict) else None
    if (result is not None and not isinstance(result, dict)) or not isinstance(
        raw_items, list | None
    ):
        raise ResponseError(
            f"POST {url} answered a searchResult without an items list: is "
            "AMAZON_API_BASE_URL the Creators API?"
        )
    items: list[EvidenceItem] = []
    seen: set[str] = set()
    skipped = 0
    for index, raw in enumerate(raw_items or []):
        try:
            item = parse_item(raw, marketplace)
        except BadItemError as exc:
            skipped += 1
            log.warning("amazon_item_skipped", index=index, reason=str(exc))
            continue
        if item.id not in seen:
            seen.add(item.id)
            items.append(item)
    return items, skipped


def parse_item(raw: object, marketplace: str) -> EvidenceItem:
    """One product as evidence; ``BadItemError`` says why it cannot be one."""
    if not isinstance(raw, dict):
        raise BadItemError(f"the item is {type(raw).__name__}, not an object")
    asin = raw.get("asin")
    if not isinstance(asin, str) or not _ASIN.match(asin.strip().upper()):
        raise BadItemError(f"no valid asin ({asin!r:.40})")
    asin = asin.strip().upper()
    info = _object(raw, "itemInfo")
    title = _object(info, "title").get("displayValue")
    if not isinstance(title, str) or not title.strip():
        raise BadItemError(f"{asin}: no itemInfo.title.displayValue")
    try:
        return EvidenceItem(
            kind="amazon",
            id=asin,
            title=title.strip(),
            text="; ".join(_features(_object(info, "features"), asin)),
            url=canonical_url(marketplace, asin),
            where=marketplace,
            metrics=_review_metrics(_object(raw, "customerReviews"), asin),
        )
    except ValidationError as exc:
        raise BadItemError(f"{asin}: {exc.errors()[0]['msg']}") from exc


def _object(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadItemError(f"{key} is {type(value).__name__}, not an object")
    return value


def _features(features: dict[str, Any], asin: str) -> list[str]:
    values = features.get("displayValues")
    if values is None:
        return []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise BadItemError(f"{asin}: itemInfo.features.displayValues is not a list of strings")
    return [v.strip() for v in values if v.strip()]


def _review_metrics(reviews: dict[str, Any], asin: str) -> dict[str, float]:
    """``rating`` and ``reviews`` only when the API offered them (it often does not)."""
    metrics: dict[str, float] = {}
    count = reviews.get("count")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
            raise BadItemError(f"{asin}: customerReviews.count is {count!r:.40}")
        metrics["reviews"] = float(count)
    rating = _object(reviews, "starRating").get("value")
    if rating is not None:
        if isinstance(rating, bool) or not isinstance(rating, int | float) or not 0 <= rating <= 5:
            raise BadItemError(f"{asin}: customerReviews.starRating.value is {rating!r:.40}")
        metrics["rating"] = float(rating)
    return metrics


def error_code(body: Any) -> tuple[str | None, str | None]:
    """(code, message) of an error body: ``{"reason"|"code"|"type", "message"}`` or
    ``{"errors": [{"code", "message"}]}`` (both shapes are seen from the Creators API)."""
    if not isinstance(body, dict):
        return None, None
    errors = body.get("errors") or body.get("Errors")
    first = errors[0] if isinstance(errors, list) and errors else body
    if not isinstance(first, dict):
        return None, None
    code = next((first[k] for k in ("reason", "code", "Code", "type") if first.get(k)), None)
    message = first.get("message") or first.get("Message")
    return (
        str(code) if code is not None else None,
        str(message)[:200] if message is not None else None,
    )
