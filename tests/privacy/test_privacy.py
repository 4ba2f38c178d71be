"""Usernames are stored only as salted hashes: the hash, the salt, and every store's bytes.

The stores are filled the way users fill them (``crowdsift archive import``, ``index``,
``fetch``, an expert import), then every file under the data directory is searched for the
usernames of the input, as bytes. ``CROWDSIFT_KEEP_USERNAMES=1`` is the one way to keep them.
"""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from crowdsift.cli.main import app
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.errors import ArchiveError, ConfigError
from crowdsift.core.privacy import (
    SALT_BYTES,
    AuthorPolicy,
    author_hash,
    is_person,
    load_salt,
    salt_path,
)
from crowdsift.core.pseudonymize import scrub_names, scrub_record, scrub_reddit
from crowdsift.sources.archive import db
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.importer import import_channel

NOW_TS = 1_717_243_200
POSTER, COMMENTER, NESTED = "Alice_Wonderbyte", "bob_quillfeather", "carol_nestedname"
ACCOUNT_ID, MODERATOR = "t2_zq81kx", "mod_davemcmodface"
NAMES = (POSTER, COMMENTER, NESTED, ACCOUNT_ID, MODERATOR)
runner = CliRunner()


def invoke(*args: str) -> Result:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def leaked(root: Path, names: tuple[str, ...] = NAMES) -> dict[str, list[str]]:
    """Which names appear (any case) in which files under ``root``."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes().lower()
        hits = [name for name in names if name.lower().encode() in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def dump_records() -> list[dict[str, Any]]:
    body = "My review of the Plaud Note voice recorder after three months of daily meetings."
    post = {
        "id": "pv1", "subreddit": "gadgets", "author": POSTER, "author_fullname": ACCOUNT_ID,
        "approved_by": MODERATOR, "banned_by": None, "title": "Plaud Note voice recorder review",
        "selftext": body, "score": 12, "num_comments": 2, "created_utc": NOW_TS,
        "permalink": "/r/gadgets/comments/pv1/plaud/", "is_self": True, "over_18": False,
        "crosspost_parent_list": [{"id": "px0", "author": NESTED, "title": "original"}],
    }  # fmt: skip
    deleted = {**post, "id": "pv2", "author": "[deleted]", "author_fullname": None,
               "permalink": "/r/gadgets/comments/pv2/plaud/"}  # fmt: skip
    comments = [
        {"id": f"cv{n}", "link_id": f"t3_{pid}", "parent_id": f"t3_{pid}", "subreddit": "gadgets",
         "author": who, "body": "The Plaud Note transcripts saved me hours every week.",
         "score": 5, "created_utc": NOW_TS + n}
        for n, (pid, who) in enumerate([("pv1", COMMENTER), ("pv1", "AutoModerator"),
                                        ("pv2", COMMENTER)])
    ]  # fmt: skip
    return [post, deleted, *comments]


def write_dump(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


# --- the hash and the salt ---------------------------------------------------------------------


def test_hash_is_stable_per_salt_and_differs_across_salts() -> None:
    one, two = b"1" * SALT_BYTES, b"2" * SALT_BYTES
    first = author_hash(POSTER, one)
    assert first is not None and len(first) == 16 and int(first, 16) >= 0
    assert author_hash(POSTER, one) == first == author_hash(f" {POSTER.upper()} ", one)
    assert author_hash(POSTER, two) != first
    assert author_hash(COMMENTER, one) != first
    assert AuthorPolicy(one).hash(POSTER) == first  # the cached path agrees with the function
    for nobody in (None, "", "  ", "[deleted]", "[Removed]"):
        assert author_hash(nobody, one) is None


def test_salt_file_is_created_private_once_and_reused(isolated_environment: Path) -> None:
    settings = Settings()
    salt = load_salt(settings)
    path = salt_path(settings.data_dir)
    assert len(salt) == SALT_BYTES and path.read_bytes() == salt
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_salt(Settings()) == salt
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_salt_setting_overrides_the_file_and_is_redacted(isolated_environment: Path) -> None:
    settings = Settings(author_salt="a shared salt for the whole team")
    assert load_salt(settings) == b"a shared salt for the whole team"
    assert not salt_path(settings.data_dir).exists()
    assert "a shared salt for the whole team" in settings.secret_values()


def test_a_damaged_salt_file_is_refused_not_replaced(isolated_environment: Path) -> None:
    path = salt_path(Settings().data_dir)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"short")
    with pytest.raises(ConfigError, match="holds 5 bytes"):
        load_salt(Settings())
    assert path.read_bytes() == b"short"


def test_scrub_replaces_names_wherever_they_are_keys_and_nowhere_else() -> None:
    policy = AuthorPolicy(b"s" * SALT_BYTES)
    raw = json.dumps({"author": POSTER, "selftext": f'quote: {{"author": "{COMMENTER}"}}',
                      "nested": [{"author" : NESTED}], "author_flair_text": "Pro",
                      "author_fullname": ACCOUNT_ID, "mod": {"banned_by": MODERATOR}})  # fmt: skip
    data = json.loads(scrub_names(raw, policy))
    assert data["author"] is None and data["author_hash"] == policy.hash(POSTER)
    assert data["nested"][0] == {"author": None, "author_hash": policy.hash(NESTED)}
    assert data["author_fullname"] is None and data["mod"] == {"banned_by": None}
    assert data["selftext"] == f'quote: {{"author": "{COMMENTER}"}}'  # text is data, untouched
    assert data["author_flair_text"] == "Pro"
    markers = json.dumps({"author": "[deleted]", "x": {"author": "AutoModerator"}})
    assert scrub_names(markers, policy) == markers  # nobody, and a bot the vetoes need
    assert scrub_names(raw, AuthorPolicy(b"s" * SALT_BYTES, keep_usernames=True)) == raw


# --- the stores, filled as users fill them -------------------------------------------------------


def test_no_username_in_any_store_after_import_index_and_fetch(
    isolated_environment: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROWDSIFT_FEED_EMBEDDER", "hashing")
    get_settings.cache_clear()
    home = isolated_environment
    archive = home / "archive.sqlite"
    dump = write_dump(tmp_path / "RS_privacy.ndjson", dump_records())
    invoke("archive", "import", str(dump), "--archive", str(archive), "--json")
    invoke("index", "--archive", str(archive), "--json")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"search_terms": ["plaud"], "subreddits": ["gadgets"]}))
    fetched = invoke("fetch", "--plan", str(plan), "--source", "archive", "--archive",
                     str(archive), "--json")  # fmt: skip

    assert (home / "crowdsift.sqlite").is_file() and (home / "chroma").is_dir()
    assert leaked(home) == {}
    assert not any(name.lower() in fetched.stdout.lower() for name in NAMES)

    salt = load_salt(Settings())
    expected = author_hash(POSTER, salt)
    conn = sqlite3.connect(archive)
    rows = conn.execute("SELECT id, author, author_hash FROM posts ORDER BY id").fetchall()
    comments = conn.execute("SELECT id, author, author_hash FROM comments ORDER BY id").fetchall()
    conn.close()
    assert rows == [("pv1", None, expected), ("pv2", "[deleted]", None)]
    assert comments == [("cv0", None, author_hash(COMMENTER, salt)),
                        ("cv1", "AutoModerator", author_hash("AutoModerator", salt)),
                        ("cv2", None, author_hash(COMMENTER, salt))]  # fmt: skip
    # The pseudonym travels on: Chroma metadata and the fetch output carry the same hash.
    client = chromadb.PersistentClient(
        path=str(home / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    indexed = client.get_collection("crowdsift_posts").get(ids=["pv1"], include=["metadatas"])
    assert (indexed["metadatas"] or [{}])[0]["author_hash"] == expected
    # pv2's author closed their account: the post stands, with no author to pseudonymise
    assert [p["author_hash"] for p in json.loads(fetched.stdout)["posts"]] == [expected, None]


def test_keep_usernames_keeps_them_next_to_the_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROWDSIFT_KEEP_USERNAMES", "1")
    get_settings.cache_clear()
    archive = tmp_path / "kept" / "archive.sqlite"
    import_files([write_dump(tmp_path / "RS.ndjson", dump_records())], archive)
    # The columns name them; the records are stored compressed, so one is read back.
    names = leaked(archive.parent, (POSTER, COMMENTER, NESTED))["archive.sqlite"]
    assert {POSTER, COMMENTER} <= set(names)
    reader = db.open_readonly(archive)
    (doc,) = reader.execute("SELECT doc FROM posts WHERE id = 'pv1'").fetchone()
    record = db.codec_of(reader).decode(doc)
    reader.close()
    assert record["author"] == POSTER and record["crosspost_parent_list"][0]["author"] == NESTED
    conn = sqlite3.connect(archive)
    (author, pseudonym), *_ = conn.execute("SELECT author, author_hash FROM posts ORDER BY id")
    conn.close()
    assert author == POSTER and pseudonym == author_hash(POSTER, load_salt(Settings()))


def test_an_archive_written_before_hashing_is_hashed_when_migrated(
    tmp_path: Path, isolated_environment: Path
) -> None:
    archive = tmp_path / "old" / "archive.sqlite"
    archive.parent.mkdir()
    conn = sqlite3.connect(archive, isolation_level=None)
    conn.execute(f"PRAGMA application_id = {db.APPLICATION_ID}")
    conn.executescript(f"BEGIN;\n{db.MIGRATIONS[0]}\nPRAGMA user_version = 1;\nCOMMIT;")
    post = dump_records()[0]
    conn.execute(
        "INSERT INTO posts VALUES (?, 'gadgets', ?, 't', 's', 1, 0, ?, 0, ?)",
        ("pv1", POSTER, NOW_TS, json.dumps(post)),
    )
    conn.close()
    with pytest.raises(ArchiveError, match="crowdsift archive migrate"):
        db.open_readonly(archive)  # an old format says what to run

    result = invoke("archive", "migrate", "--archive", str(archive), "--json")

    assert json.loads(result.stdout)["posts"] == 1
    assert leaked(archive.parent) == {}
    conn = sqlite3.connect(archive)
    row = conn.execute("SELECT author, author_hash FROM posts").fetchone()
    conn.close()
    assert row == (None, author_hash(POSTER, load_salt(Settings())))
    # (a file that gives no record fails the import, so the post itself is imported again)
    again = invoke("archive", "import", str(write_dump(tmp_path / "RS.ndjson", [post])),
                   "--archive", str(archive), "--no-embed")  # fmt: skip
    assert "usernames" not in again.stderr  # nothing left to hash: no note


def test_expert_commenters_are_pseudonyms_and_the_expert_keeps_its_name(
    tmp_path: Path, isolated_environment: Path
) -> None:
    channel, group = telegram_exports(tmp_path)
    store = SqlExpertStore(f"sqlite:///{tmp_path / 'db' / 'experts.sqlite'}")
    try:
        import_channel(store, channel, discussion=group, channel="bench_notes")
        comments = {c.comment_id: c.author for c in store.all_comments("bench_notes")}
    finally:
        store.close()
    assert leaked(tmp_path / "db", ("Zelda Quuxworth", "user7781")) == {}
    pseudonym = f"member-{author_hash('Zelda Quuxworth', load_salt(Settings()))}"
    assert comments == {11: pseudonym, 12: "Bench Notes", 13: "Deleted Account", 14: pseudonym}

    kept = SqlExpertStore(
        f"sqlite:///{tmp_path / 'kept.sqlite'}",
        authors=AuthorPolicy(b"k" * SALT_BYTES, keep_usernames=True),
    )
    try:
        import_channel(kept, channel, discussion=group, channel="bench_notes")
        assert kept.all_comments("bench_notes")[0].author == "Zelda Quuxworth"
    finally:
        kept.close()


def telegram_exports(tmp_path: Path) -> tuple[Path, Path]:
    """A channel with one post, and its group: the post's copy and four comments."""

    def msg(msg_id: int, text: str, who: str | None, who_id: str, **extra: Any) -> dict[str, Any]:
        return {"id": msg_id, "type": "message", "date": f"2026-09-01T09:{msg_id:02d}:00",
                "date_unixtime": str(1_788_253_200 + 60 * msg_id), "from": who,
                "from_id": who_id, "text": text, **extra}  # fmt: skip

    peer = "channel1500000001"
    post = "Impact driver or drill? An impact driver for lag screws, a drill for holes."
    channel = [msg(2, post, "Bench Notes", peer)]
    group = [
        msg(10, post, "Bench Notes", peer, forwarded_from="Bench Notes", saved_from="Bench Notes"),
        msg(11, "Which brand would you pick?", "Zelda Quuxworth", "user7781",
            reply_to_message_id=10),
        msg(12, "Whatever battery platform you own.", "Bench Notes", peer, reply_to_message_id=11),
        msg(13, "And for concrete?", None, "user4", reply_to_message_id=10),
        msg(14, "Thanks, that settles it.", "Zelda Quuxworth", "user7781", reply_to_message_id=12),
    ]  # fmt: skip
    paths = []
    for name, kind, chat_id, messages in (
        ("chan", "public_channel", 1500000001, channel),
        ("group", "public_supergroup", 1500000002, group),
    ):
        path = tmp_path / name / "result.json"
        path.parent.mkdir()
        document = {"name": "Bench Notes", "type": kind, "id": chat_id, "messages": messages}
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


# --- the text surgery agrees with a dict-level scrub, whatever the JSON looks like ---------------

_KEYS = st.sampled_from(
    # 'x"author' is a key whose escaped quote makes '"author":' appear mid-key in the text
    ["author", "author_fullname", "approved_by", "banned_by", "removed_by", "mod_reason_by",
     "link_author", "authorDisplayName", "authorChannelUrl", "authorProfileImageUrl",
     "authorChannelId", "value", "title", 'x"author', "selftext"]
)  # fmt: skip
_TEXT = st.one_of(
    st.sampled_from([POSTER, "[deleted]", "AutoModerator", "", '","author":"evil', 'a\\b"c']),
    st.text(max_size=12),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=12,
)


_NULLED_STRINGS = (
    "author_fullname",
    "approved_by",
    "banned_by",
    "removed_by",
    "mod_reason_by",
    "link_author",
    "authorDisplayName",
    "authorChannelUrl",
    "authorProfileImageUrl",
)


def _reference_scrub(value: Any, policy: AuthorPolicy) -> Any:
    """What ``scrub_names`` must amount to, written the slow, obvious way."""
    if isinstance(value, list):
        return [_reference_scrub(item, policy) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _reference_scrub(item, policy) for key, item in value.items()}
    for key in _NULLED_STRINGS:
        if isinstance(out.get(key), str):
            out[key] = None
    channel = out.get("authorChannelId")
    if (
        isinstance(channel, dict)
        and list(channel) == ["value"]
        and isinstance(channel["value"], str)
    ):
        out["authorChannelId"] = None
    name = out.get("author")
    if isinstance(name, str) and policy.hash(name) and name.strip().lower() != "automoderator":
        out["author"], out["author_hash"] = None, policy.hash(name)
    return out


@settings(max_examples=200, deadline=None)
@given(
    document=st.dictionaries(_KEYS, _JSON, max_size=6),
    layout=st.sampled_from([(",", ":"), (", ", ": "), (" ,\n ", " :  ")]),
    ascii_only=st.booleans(),
)
def test_scrub_names_equals_a_dict_level_scrub(
    document: dict[str, Any], layout: tuple[str, str], ascii_only: bool
) -> None:
    policy = AuthorPolicy(b"p" * SALT_BYTES)
    raw = json.dumps(document, separators=layout, ensure_ascii=ascii_only)
    assert json.loads(scrub_names(raw, policy)) == _reference_scrub(document, policy)


_NAME = st.one_of(st.sampled_from([POSTER, "user_1", "[deleted]", "a-b_C9"]), st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(
    document=st.dictionaries(_KEYS, _JSON, max_size=6),
    author=_NAME,
    fullname=st.one_of(st.none(), st.sampled_from(["t2_abc", 't2_"q', "t2_\\x"])),
    extra=st.dictionaries(_KEYS, _JSON, max_size=3),
    layout=st.sampled_from([(",", ":"), (", ", ": "), (" ,\n ", " :  ")]),
    hint=st.one_of(st.none(), _NAME),
)
def test_the_archive_fast_path_writes_what_the_general_scrub_writes(
    document: dict[str, Any],
    author: str,
    fullname: str | None,
    extra: dict[str, Any],
    layout: tuple[str, str],
    hint: str | None,
) -> None:
    """``scrub_record`` (splicing, for dump lines) is ``scrub_reddit`` byte for byte, whatever
    the record and whatever author the caller claims it has."""
    policy = AuthorPolicy(b"p" * SALT_BYTES)
    record = {"author": author, **({"author_fullname": fullname} if fullname else {}), **document}
    record.update(extra)
    raw = json.dumps(record, separators=layout)
    for claimed in (record.get("author"), hint):
        name = claimed if isinstance(claimed, str) else None
        digest = policy.hash(name) if is_person(name) else None
        assert scrub_record(raw, policy, name, digest) == scrub_reddit(raw, policy)
