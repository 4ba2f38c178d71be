"""Usernames out of raw JSON text, by text surgery: shared by the archive and the HTTP transport.

Raw JSON names people: Reddit and Arctic Shift records carry ``author`` and ``author_fullname``
(crossposts and comment trees nest more of them), moderator fields (``approved_by``,
``banned_by``, ``removed_by``, ``mod_reason_by``) name moderators, a comment listing may carry
``link_author``, and a YouTube comment its ``authorDisplayName``, channel URL, channel id and
avatar. ``scrub_names`` turns every ``"author": "<name>"`` into
``"author": null, "author_hash": "<salted hash>"`` (``crowdsift.privacy``) and every other
name field into null, unless the policy keeps usernames. Deletion markers (``[deleted]``) and
AutoModerator stay: they are no one, and the vetoes read them.

The archive writer scrubs every row's raw JSON; ``HttpTransport`` scrubs every body it parses
(before parsing, so cache hits and live answers are the same text).

Why text surgery rather than ``json.loads``/``dumps``: the import is bound by JSON work and a
second parse and a serialisation per record cost a third of its speed. The patterns only
match real keys: a key is preceded by ``{`` or ``,`` (and whitespace), and inside a JSON
string every quote is escaped, so ``,"author":`` cannot occur there. Values that are not
plain strings (null, numbers) are left as they are.
"""

from __future__ import annotations

import functools
import json
import re

from crowdsift.privacy import AuthorPolicy, is_person

# One pattern led by the literal "author is twice as fast as one with alternatives; the rarer
# fields are looked for only when a cheap substring test says one may be there.
_STRING = r'"(?:[^"\\]|\\.)*"'
_AUTHOR_FIELDS = re.compile(rf'"author(_fullname)?"\s*:\s*({_STRING})')
_MODERATOR_FIELDS = re.compile(
    rf'"(approved_by|banned_by|removed_by|mod_reason_by|link_author)"\s*:\s*{_STRING}'
)
_YOUTUBE_FIELDS = re.compile(
    rf'"(authorDisplayName|authorChannelUrl|authorProfileImageUrl)"\s*:\s*{_STRING}'
    rf'|"(authorChannelId)"\s*:\s*\{{\s*"value"\s*:\s*{_STRING}\s*\}}'
)
_YOUTUBE_MARKERS = ('"authorDisplayName"', '"authorChannel', '"authorProfileImageUrl"')
_SPACE = " \t\r\n"


def scrub_names(raw: str, policy: AuthorPolicy) -> str:
    """``raw`` with every username replaced (see the module docstring); as is when kept."""
    if policy.keep_usernames:
        return raw
    scrubbed = _AUTHOR_FIELDS.sub(functools.partial(_author, policy=policy), raw)
    if '_by"' in scrubbed or 'link_author"' in scrubbed:
        scrubbed = _MODERATOR_FIELDS.sub(_to_null, scrubbed)
    if any(marker in scrubbed for marker in _YOUTUBE_MARKERS):
        scrubbed = _YOUTUBE_FIELDS.sub(_to_null, scrubbed)
    return scrubbed


def _author(match: re.Match[str], policy: AuthorPolicy) -> str:
    if not _is_key(match.string, match.start()):
        return match.group(0)
    if match.group(1):  # author_fullname: the account id (t2_...), as identifying as a name
        return '"author_fullname":null'
    quoted = match.group(2)
    value = json.loads(quoted) if "\\" in quoted else quoted[1:-1]
    if not is_person(value):
        return match.group(0)
    return f'"author":null,"author_hash":"{policy.hash(value)}"'


def _to_null(match: re.Match[str]) -> str:
    if not _is_key(match.string, match.start()):
        return match.group(0)
    key = next(group for group in match.groups() if group)
    return f'"{key}":null'


def _is_key(text: str, start: int) -> bool:
    """True when the quote at ``start`` opens an object key: ``{`` or ``,`` comes before it
    (whitespace aside). Inside a string a quote is always escaped, so that never holds there.
    (Checked here rather than in the pattern: a leading ``[{,]`` made the scan 5x slower.)"""
    index = start - 1
    if index >= 0 and text[index] in "{,":  # compact JSON: the common case, decided at once
        return True
    while index >= 0 and text[index] in _SPACE:
        index -= 1
    return index >= 0 and text[index] in "{,"
