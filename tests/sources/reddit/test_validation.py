"""Metadata vetoes, in the seed's order, on the field variants real data carries."""

from __future__ import annotations

import pytest

from crowdsift.core.models import RejectReason
from crowdsift.sources.reddit.validation import veto_comment, veto_post
from crowdsift.testing.factories import raw_comment, raw_post


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({}, None),
        ({"selftext": "[deleted]"}, RejectReason.DELETED_OR_REMOVED),
        ({"selftext": "[removed]"}, RejectReason.DELETED_OR_REMOVED),
        ({"author": "[deleted]"}, None),  # the account is gone, the text stands
        ({"removed_by_category": "moderator"}, RejectReason.DELETED_OR_REMOVED),
        ({"author": "AutoModerator"}, RejectReason.METADATA_VETO),
        ({"is_self": False, "selftext": ""}, RejectReason.METADATA_VETO),
        ({"is_self": "false"}, RejectReason.METADATA_VETO),
        ({"over_18": True}, RejectReason.NSFW_OR_AD),
        ({"over_18": 1}, RejectReason.NSFW_OR_AD),
        ({"promoted": True}, RejectReason.NSFW_OR_AD),
        ({"is_created_from_ads_ui": True}, RejectReason.NSFW_OR_AD),
        # order: deleted wins over AutoModerator wins over NSFW
        ({"selftext": "[removed]", "author": "AutoModerator"}, RejectReason.DELETED_OR_REMOVED),
        ({"author": "AutoModerator", "over_18": True}, RejectReason.METADATA_VETO),
    ],
)
def test_veto_post(overrides: dict[str, object], reason: RejectReason | None) -> None:
    assert veto_post(raw_post(**overrides)) == reason


def test_old_dumps_without_is_self_use_the_domain() -> None:
    self_post = raw_post()
    del self_post["is_self"]
    assert veto_post(self_post) is None
    link_post = raw_post(domain="youtube.com")
    del link_post["is_self"]
    assert veto_post(link_post) == RejectReason.METADATA_VETO


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({}, None),
        ({"body": "[deleted]"}, RejectReason.DELETED_OR_REMOVED),
        ({"body": "[removed]"}, RejectReason.DELETED_OR_REMOVED),
        ({"author": "[deleted]"}, None),  # a reply whose author left still counts
        ({"author": "AutoModerator"}, RejectReason.METADATA_VETO),
        ({"distinguished": "moderator", "stickied": True}, RejectReason.METADATA_VETO),
        ({"distinguished": "moderator", "stickied": False}, None),
        ({"over_18": True}, RejectReason.NSFW_OR_AD),
    ],
)
def test_veto_comment(overrides: dict[str, object], reason: RejectReason | None) -> None:
    assert veto_comment(raw_comment(**overrides)) == reason
