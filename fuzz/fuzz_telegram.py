"""Fuzz target: Telegram Desktop exports (``result.json``) through the expert importer.

The input is cut at the first NUL into the channel export and its discussion group's export;
both are written as files and imported with ``import_channel`` into an in-memory target, and
parsed on their own with ``parse_chat`` and the pure linking functions. Findings: anything but
a ``TelegramExportError`` (or another ``CrowdsiftError``) escaping, or a parsed chat that loses
a message (every message is kept, counted as service/unsupported, or listed as malformed).

    python fuzz/fuzz_telegram.py fuzz/corpus/telegram -max_total_time=30
"""

from __future__ import annotations

import atexit
import contextlib
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    import atheris

    _imports = atheris.instrument_imports(include=["crowdsift", "harness"])
else:  # imported by the tests: no atheris needed, nothing to instrument
    _imports = contextlib.nullcontext()

with _imports:
    from crowdsift.sources.experts.importer import import_channel, read_export
    from crowdsift.sources.experts.models import Expert, ExpertComment, ExpertPost, PostLink
    from crowdsift.sources.experts.telegram import (
        channel_links,
        infer_username,
        parse_chat,
        thread_discussion,
    )
    from harness import quiet_logs, split, typed

_WORKDIR = Path(tempfile.mkdtemp(prefix="crowdsift-fuzz-telegram-"))
atexit.register(shutil.rmtree, _WORKDIR, ignore_errors=True)


class Collected:
    """An ``ExpertImportTarget`` that keeps what it is given (the importer's only output)."""

    def __init__(self) -> None:
        self.writes: list[tuple[Expert, int, int, int]] = []

    def write_import(
        self,
        expert: Expert,
        posts: Sequence[ExpertPost],
        links: Sequence[PostLink],
        comments: Sequence[ExpertComment],
        *,
        digest: str | None = None,  # noqa: ARG002  # ExpertStore's; the target checks shapes
    ) -> None:
        kept = {post.post_id for post in posts}
        assert all(link.source_id in kept and link.target_id in kept for link in links)
        assert all(comment.post_id in kept for comment in comments)
        self.writes.append((expert, len(posts), len(links), len(comments)))


def check_chat(doc: Any) -> None:
    """``parse_chat`` accounts for every message, and linking never fails on what it kept."""
    chat = typed(parse_chat, doc, label="fuzz")
    if chat is None:
        return
    total = len(doc["messages"])
    parsed = len(chat.messages) + chat.service + chat.unsupported + len(chat.malformed)
    assert parsed == total, (parsed, total)
    username, _votes = infer_username(chat)
    channel_links(chat, username or "fuzzchannel")
    thread_discussion(chat, chat, expert_user_ids=("user1",))


def TestOneInput(data: bytes) -> None:
    channel, group = split(data, 2)
    channel_path, group_path = _WORKDIR / "channel.json", _WORKDIR / "group.json"
    channel_path.write_bytes(channel)
    group_path.write_bytes(group)
    for path in (channel_path, group_path):
        loaded = typed(read_export, path, what="fuzz export")
        if loaded is not None:
            check_chat(loaded[0])
    target = Collected()
    report = typed(
        import_channel, target, channel_path, discussion=group_path, channel="fuzzchannel"
    )
    if report is not None:
        ((_expert, posts, links, comments),) = target.writes
        assert (report.posts, report.links, report.comments) == (posts, links, comments)
        json.dumps(report.model_dump(mode="json"))  # the CLI prints it


if __name__ == "__main__":
    quiet_logs()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
