"""Crash safety under ``kill -9`` (issue 9): real work killed mid-write, then run again.

Each case starts the real work in a subprocess (``python -m crowdsift …`` or the driver in
``drivers/``) and waits until it is demonstrably inside a write, well past its start:
another connection has found the SQLite write lock taken for a while, the writer's PostgreSQL
transaction has run a second INSERT, or the job's status and the LLM server say so. Then
SIGKILL, and the checks: the database passes its integrity check, only whole transactions are
visible, and running the work again ends exactly where one clean run ends (no duplicates,
nothing lost, no finished job touched).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy
import zstandard

from crowdsift.core.store import CommentRow
from crowdsift.demo import demo_dump_files
from crowdsift.sources.archive.importer import BATCH_SIZE, import_files
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.demo import ensure_demo_experts
from crowdsift.sources.experts.importer import import_channel
from tests.crash.drivers.comment_writer import batch
from tests.faults.engine_faults_support import API_KEY, Formulation, TaskResponder
from tests.support.net import free_port, wait_for_http
from tests.support.openai_server import ChatCompletionsServer, Queued, delay
from tests.support.paths import TESTS

POLL_S = 0.005


# --- processes and waiting ------------------------------------------------------------------


@contextmanager
def spawned(args: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[Any]:
    """``python ARGS`` with its output in ``log`` (a file: a full pipe would stall the
    process); killed on the way out if it is still running."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, *args], stdout=out, stderr=subprocess.STDOUT, env=env
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)


def wait_until(
    check: Callable[[], bool], what: str, process: Any = None, timeout: float = 60.0
) -> None:
    """Poll ``check``; fail if ``process`` ends first (the kill would prove nothing)."""
    deadline = time.monotonic() + timeout
    while not check():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the process ended (exit {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout} s waiting until {what}")
        time.sleep(POLL_S)


def held(writing: Callable[[], bool], seconds: float) -> Callable[[], bool]:
    """A check that turns true once ``writing`` has been true without a break for ``seconds``:
    the writer has been inside one transaction for a while, so a kill now would show any part
    of it committed early."""
    since: list[float] = []

    def check() -> bool:
        if not writing():
            since.clear()
            return False
        now = time.monotonic()
        if not since:
            since.append(now)
        return now - since[0] >= seconds

    return check


def halfway(writing: Callable[[], bool]) -> Callable[[], bool]:
    """Like ``held`` for a writer that writes transaction after transaction: true once the
    current write has lasted half as long as the longest one seen end to end (the first ones
    only calibrate), so the kill lands well inside a transaction on a fast machine or a slow."""
    since: list[float] = []
    longest = [0.0]

    def check() -> bool:
        now = time.monotonic()
        if not writing():
            if since:
                longest[0] = max(longest[0], now - since.pop())
            return False
        if not since:
            since.append(now)
        return longest[0] > 0 and now - since[0] >= longest[0] / 2

    return check


def kill9(process: Any, log: Path) -> None:
    process.send_signal(signal.SIGKILL)
    code = process.wait(timeout=30)
    assert code == -signal.SIGKILL, f"exit {code} before the kill:\n{log.read_text()[-2000:]}"


def run_to_end(args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
    with log.open("wb") as out:
        done = subprocess.run(
            [sys.executable, *args], stdout=out, stderr=subprocess.STDOUT, env=env, timeout=300
        )
    assert done.returncode == 0, log.read_text()[-3000:]


# --- SQLite inspection ----------------------------------------------------------------------


def sqlite_writing(path: Path) -> bool:
    """True while some connection holds the database's write lock (a transaction is writing)."""
    if not path.exists():
        return False
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            return True
        raise
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
    return False


def sqlite_count(path: Path, table: str) -> int:
    """Committed rows of ``table``; 0 while the file or the table does not exist yet."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not created yet
        return 0
    finally:
        conn.close()


def query(path: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def assert_integrity(path: Path) -> None:
    assert query(path, "PRAGMA integrity_check") == [("ok",)]


def rows_only_in(path: Path, other: Path, table: str, skip: Collection[str] = ()) -> int:
    """Rows of ``table`` in ``path`` with no identical row (every column) in ``other``;
    ``skip``: ids whose row may rightly differ."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("ATTACH DATABASE ? AS other", (str(other),))
        marks = ", ".join("?" * len(skip))
        sql = (
            f"SELECT count(*) FROM (SELECT * FROM main.{table} WHERE id NOT IN ({marks}) "
            f"EXCEPT SELECT * FROM other.{table})"
        )
        return int(conn.execute(sql, tuple(skip)).fetchone()[0])
    finally:
        conn.close()


# --- 1. archive import ----------------------------------------------------------------------


def _demo_records(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as reader:
        return [json.loads(line) for line in reader.read().splitlines() if line.strip()]


def _write_zst(path: Path, records: Iterator[dict[str, Any]]) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.write_bytes(zstandard.ZstdCompressor(level=1).compress(data))
    return path


def big_dumps(directory: Path, copies: int) -> tuple[list[Path], list[str]]:
    """The demo dumps ``copies`` times over, each copy with its own ids (threads kept whole,
    and the demo's repeated records, newer versions of one id, repeated too); with the comment
    ids in file order."""
    posts, comments = (_demo_records(p) for p in demo_dump_files())

    def renamed(record: dict[str, Any], k: int, *keys: str) -> dict[str, Any]:
        copy = dict(record)
        copy["id"] = f"{record['id']}x{k}"
        copy["name"] = f"{record['name'][:3]}{copy['id']}"
        for key in keys:
            copy[key] = f"{record[key]}x{k}"
        return copy

    many_comments = [renamed(c, k, "link_id", "parent_id") for k in range(copies) for c in comments]
    paths = [
        _write_zst(
            directory / "RS_crash.ndjson.zst",
            (renamed(p, k) for k in range(copies) for p in posts),
        ),
        _write_zst(directory / "RC_crash.ndjson.zst", iter(many_comments)),
    ]
    return paths, [c["id"] for c in many_comments]


def committed_after_each_batch(ids: list[str]) -> list[set[str]]:
    """The ids stored after each whole batch: the writer commits once it holds BATCH_SIZE
    distinct rows (a record repeated within a batch is one row, see ``BatchWriter.add``)."""
    done: set[str] = set()
    pending: set[str] = set()
    stages = []
    for record_id in ids:
        pending.add(record_id)
        if len(pending) >= BATCH_SIZE:
            done |= pending
            pending = set()
            stages.append(set(done))
    return stages


def test_archive_import_killed_mid_batch_keeps_whole_batches_and_resumes(tmp_path: Path) -> None:
    (tmp_path / "one-copy").mkdir()
    per_copy = len(big_dumps(tmp_path / "one-copy", copies=1)[1])
    # enough comments for more than six whole batches, whatever the writer's batch size
    dumps, comment_ids = big_dumps(tmp_path, copies=1 + 7 * BATCH_SIZE // per_copy)
    clean = tmp_path / "clean.sqlite"
    report = import_files(dumps, clean)
    assert report.ok
    clean_posts, clean_comments = sqlite_count(clean, "posts"), sqlite_count(clean, "comments")
    assert clean_comments > 6 * BATCH_SIZE
    archive = tmp_path / "archive.sqlite"
    command = [
        "-m", "crowdsift", "archive", "import", *map(str, dumps), "--archive", str(archive),
        "--no-embed",  # the records' crash safety; vectors are tested on their own
    ]  # fmt: skip

    log = tmp_path / "killed.log"
    with spawned(command, log) as process:
        writing = halfway(lambda: sqlite_writing(archive))
        wait_until(
            lambda: sqlite_count(archive, "comments") > 0 and writing(),
            "the import was halfway through a later comment batch",
            process,
        )
        kill9(process, log)

    assert_integrity(archive)
    query(archive, "INSERT INTO posts_fts(posts_fts) VALUES('integrity-check')")
    posts, comments = sqlite_count(archive, "posts"), sqlite_count(archive, "comments")
    assert posts == clean_posts  # the posts file was done before the comments began
    assert 0 < comments < clean_comments
    stored = {row[0] for row in query(archive, "SELECT id FROM comments")}
    assert stored in committed_after_each_batch(comment_ids)  # whole batches only
    assert query(archive, "SELECT count(*) FROM posts_fts_docsize") == [(posts,)]
    # every row present is the complete record (a record repeated later in the file may
    # still be in its earlier version)
    repeated = [i for i, n in Counter(comment_ids).items() if n > 1]
    assert rows_only_in(archive, clean, "posts") == 0
    assert rows_only_in(archive, clean, "comments", skip=repeated) == 0

    run_to_end(command, tmp_path / "rerun.log")
    assert_integrity(archive)
    query(archive, "INSERT INTO posts_fts(posts_fts) VALUES('integrity-check')")
    for table in ("posts", "comments"):
        assert rows_only_in(archive, clean, table) == 0
        assert rows_only_in(clean, archive, table) == 0
        assert query(archive, f"SELECT count(*), count(DISTINCT id) FROM {table}") == query(
            clean, f"SELECT count(*), count(*) FROM {table}"
        )
    assert query(archive, "SELECT count(*) FROM posts_fts_docsize") == [(clean_posts,)]


# --- 2. expert import -----------------------------------------------------------------------

CHANNEL = "crash_test_gear"
_WORDS = ("dock", "hub", "monitor", "arm", "chair", "desk", "lamp", "keyboard", "switch", "cable")
EXPERT_TABLES = ("experts", "expert_posts", "expert_links", "expert_comments")


def _message(n: int, at: int, text: str, **fields: Any) -> dict[str, Any]:
    moment = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    entities = [{"type": "plain", "text": text}]
    message = {"id": n, "type": "message", "date": moment, "date_unixtime": str(at)}
    return {**message, "text": text, "text_entities": entities, **fields}


def telegram_export(directory: Path, posts: int, replies: int) -> tuple[Path, Path]:
    """A channel export and its discussion group, shaped like the demo experts': every post
    links to the one before, is copied into the group by the channel, and gets ``replies``
    comments, every other one answering the comment before it."""
    author = {"from": "Crash Gear", "from_id": "channel1999999999"}
    channel: list[dict[str, Any]] = []
    group: list[dict[str, Any]] = []
    for n in range(1, posts + 1):
        at = 1_700_000_000 + n * 3600
        words = " ".join(_WORDS[(n * 7 + i * 3) % len(_WORDS)] for i in range(12))
        text = f"Note {n}: {words}. Verdict {n % 5} of 5, see t.me/{CHANNEL}/{max(1, n - 1)}"
        channel.append(_message(n, at, text, **author))
        copy = len(group) + 1
        group.append(_message(copy, at + 3, text, forwarded_from="Crash Gear", **author))
        for r in range(replies):
            reader = {"from": f"Reader {r}", "from_id": f"user{1000 + r}"}
            body = f"Reply {r} to note {n}: fine with the {_WORDS[(n + r) % len(_WORDS)]}."
            parent = len(group) if r % 2 else copy
            group.append(
                _message(
                    len(group) + 1, at + 60 * (r + 1), body, reply_to_message_id=parent, **reader
                )
            )
    result, discussion = directory / "result.json", directory / "discussion.json"
    chat = {"name": "Crash Gear", "type": "public_channel", "id": 1999999999}
    result.write_text(json.dumps({**chat, "messages": channel}))
    chat = {"name": "Crash Gear chat", "type": "public_supergroup", "id": 1888888888}
    discussion.write_text(json.dumps({**chat, "messages": group}))
    return result, discussion


def expert_rows(path: Path) -> dict[str, set[tuple[Any, ...]]]:
    return {table: set(query(path, f"SELECT * FROM {table}")) for table in EXPERT_TABLES}


IMPORTED_POSTS = 3000
"""Enough that the import's one transaction lasts well past the kill's 0.05 s, even on a busy
machine (with 1,500 it sometimes committed between the check and the kill)."""


def test_expert_import_killed_mid_transaction_leaves_the_previous_state(tmp_path: Path) -> None:
    result, discussion = telegram_export(tmp_path, posts=IMPORTED_POSTS, replies=4)
    clean, target = tmp_path / "clean.sqlite", tmp_path / "experts.sqlite"
    for path in (clean, target):  # both hold the demo experts, as a user's store would
        store = SqlExpertStore(f"sqlite:///{path}")
        try:
            ensure_demo_experts(store)
        finally:
            store.close()
    store = SqlExpertStore(f"sqlite:///{clean}")
    try:
        report = import_channel(store, result, discussion=discussion, channel=CHANNEL)
    finally:
        store.close()
    assert report.posts == IMPORTED_POSTS and report.comments == 4 * IMPORTED_POSTS
    assert report.links > 0
    before = expert_rows(target)
    env = {**os.environ, "CROWDSIFT_DATABASE_URL": f"sqlite:///{target}"}
    command = ["-m", "crowdsift", "experts", "import", str(result), "--discussion",
               str(discussion), "--channel", CHANNEL, "--json"]  # fmt: skip

    log = tmp_path / "killed.log"
    with spawned(command, log, env) as process:
        writing = held(lambda: sqlite_writing(target), 0.05)
        wait_until(writing, "the import had been writing for a while", process)
        kill9(process, log)

    hot_journal = Path(f"{target}-journal").exists()  # looked at before anything opens it
    assert query(target, "PRAGMA journal_mode") == [("wal",)] or hot_journal
    assert_integrity(target)  # (opening it rolled back what the dead writer left)
    assert expert_rows(target) == before  # nothing of the new expert, the others untouched

    run_to_end(command, tmp_path / "rerun.log", env)
    assert_integrity(target)
    assert expert_rows(target) == expert_rows(clean)
    assert query(target, "SELECT count(*) FROM expert_posts WHERE expert_id = ?", CHANNEL) == [
        (IMPORTED_POSTS,)
    ]


# --- 3. comment store -----------------------------------------------------------------------

DRIVER = TESTS / "crash" / "drivers" / "comment_writer.py"
COMMENT_BATCH = 1500


def _stored_comments(url: str) -> list[tuple[Any, ...]]:
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sqlalchemy.select(CommentRow.__table__)).all()
            return sorted(
                (
                    r.comment_id,
                    r.post_id,
                    r.body,
                    r.comment_karma,
                    r.source,
                    r.fetched_at.replace(tzinfo=r.fetched_at.tzinfo or UTC),
                )
                for r in rows
            )
    finally:
        engine.dispose()


def _expected(batches: int) -> list[tuple[Any, ...]]:
    return sorted(
        (c.comment_id, c.post_id, c.body, c.comment_karma, c.source, c.fetched_at)
        for number in range(batches)
        for c in batch(number, COMMENT_BATCH)
    )


def _committed(log: Path) -> int:
    return sum(line.startswith("committed ") for line in log.read_text().splitlines())


def crash_comment_writer(
    url: str, tmp_path: Path, deep: Callable[[], bool], settled: Callable[[], bool]
) -> None:
    """Kill the driver deep inside its third batch or a later one; check; write again."""
    log = tmp_path / "writer.log"
    with spawned([str(DRIVER), url, "0", "100000", str(COMMENT_BATCH)], log) as process:
        wait_until(
            lambda: _committed(log) >= 2 and deep(), "a later batch was half written", process
        )
        kill9(process, log)
    wait_until(settled, "the database let go of the dead writer", timeout=30)

    stored = _stored_comments(url)
    whole, rest = divmod(len(stored), COMMENT_BATCH)
    assert rest == 0 and whole >= 2  # only whole batches: each upsert is one transaction
    assert stored == _expected(whole)  # and every row is complete

    again = whole + 2  # the rerun rewrites the stored batches and adds the lost ones
    run_to_end([str(DRIVER), url, "0", str(again), str(COMMENT_BATCH)], tmp_path / "rerun.log")
    assert _stored_comments(url) == _expected(again)  # no duplicates, nothing lost


def test_comment_store_writer_killed_on_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "comments.sqlite"
    url = f"sqlite:///{path}"
    crash_comment_writer(url, tmp_path, halfway(lambda: sqlite_writing(path)), lambda: True)
    assert_integrity(path)


@pytest.mark.postgres
def test_comment_store_writer_killed_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    app = f"crowdsift-crash-{uuid.uuid4().hex[:8]}"
    probe = sqlalchemy.create_engine(postgres_url)
    activity = sqlalchemy.text(
        "SELECT backend_xid::text, query_start, query LIKE 'INSERT%' FROM pg_stat_activity "
        "WHERE application_name = :app"
    )
    statements: dict[str, set[datetime]] = {}

    def sessions() -> list[tuple[str | None, datetime | None, bool]]:
        with probe.connect() as conn:
            return [(row[0], row[1], bool(row[2])) for row in conn.execute(activity, {"app": app})]

    def second_statement_of_a_transaction() -> bool:
        """The writer's open transaction (it has a transaction id once it wrote a row) has
        started a second INSERT: a kill now lands after part of the batch was written."""
        for xid, query_start, inserting in sessions():
            if xid is not None and query_start is not None and inserting:
                statements.setdefault(xid, set()).add(query_start)
                return len(statements[xid]) >= 2
        return False

    try:
        crash_comment_writer(
            f"{postgres_url}&application_name={app}",
            tmp_path,
            deep=second_statement_of_a_transaction,
            settled=lambda: not sessions(),  # the server ended the dead client's session
        )
    finally:
        probe.dispose()


# --- 4. a running job -------------------------------------------------------------------------

FIRST = "Which impact driver is best for a beginner?"
SECOND = "Which cordless drill survives a year of daily use on a building site?"


class HeldResponder:
    """Answers every task validly, but holds the second job's calls while ``hold`` is set."""

    def __init__(self) -> None:
        self.inner = TaskResponder(
            formulation=Formulation(["impact driver"], ["tools", "homeimprovement"])
        )
        self.hold = threading.Event()
        self.hold.set()
        self.held = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Queued:
        answer = self.inner(body)
        if self.hold.is_set() and SECOND in json.dumps(body["messages"]):
            self.held.set()
            return delay(120, reply=answer if isinstance(answer, str) else None)
        return answer


@contextmanager
def serving(env: dict[str, str], log: Path) -> Iterator[tuple[Any, httpx.Client]]:
    """``crowdsift serve`` on a free port, answering, and a client for it."""
    port = free_port()
    serve = ["-m", "crowdsift", "serve", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with spawned(serve, log, env) as server, httpx.Client(base_url=base, timeout=30) as api:
        wait_for_http(f"{base}/healthz")
        yield server, api


def test_a_server_killed_during_a_job_keeps_finished_results_and_reruns_the_job_once(
    tmp_path: Path,
) -> None:
    responder = HeldResponder()
    with ChatCompletionsServer(api_key=API_KEY, responder=responder) as llm:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "CROWDSIFT_ENGINE": "openai",
            "CROWDSIFT_LLM_BASE_URL": llm.base_url,
            "CROWDSIFT_LLM_API_KEY": API_KEY,
            "CROWDSIFT_SOURCE": "archive",
            "CROWDSIFT_FEED_EMBEDDER": "hashing",
            "CROWDSIFT_JOB_WORKERS": "1",
            # a live job's heartbeat can pause for seconds (first language detection holds the
            # GIL), so the stale period stays well above that
            "CROWDSIFT_JOB_STALE_AFTER": "10",
            "CROWDSIFT_JOB_MAX_ATTEMPTS": "2",
        }
        database = Path(os.environ["CROWDSIFT_HOME"]) / "crowdsift.sqlite"

        log = tmp_path / "serve-1.log"
        with serving(env, log) as (server, api):
            first = api.post("/api/research", json={"question": FIRST}).json()["id"]
            second = api.post("/api/research", json={"question": SECOND}).json()["id"]

            def first_done_second_running() -> bool:
                statuses = [api.get(f"/api/research/{j}").json()["status"] for j in (first, second)]
                return statuses == ["done", "running"] and responder.held.is_set()

            wait_until(first_done_second_running, "one job was done and the other running", server)
            finished = api.get(f"/api/research/{first}").json()
            kill9(server, log)

        assert finished["result"] is not None
        left = query(database, "SELECT status, attempts FROM jobs WHERE id = ?", second)
        assert left == [("running", 1)]  # what the dead process left behind
        responder.hold.clear()

        with serving(env, tmp_path / "serve-2.log") as (server, api):
            wait_until(
                lambda: api.get(f"/api/research/{second}").json()["status"] in ("done", "failed"),
                "the interrupted job ended",
                server,
                timeout=90,
            )
            rerun = api.get(f"/api/research/{second}").json()
            kept = api.get(f"/api/research/{first}").json()
            events = _job_events(api, second)
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)

    assert kept == finished  # the finished job's result survived intact
    assert rerun["status"] == "done" and rerun["attempts"] == 2 and rerun["result"] is not None
    messages = [e["message"] for e in events if e["phase"] == "job"]
    started = [m for m in messages if m.startswith("started")]
    assert len(started) == 2 and "(attempt 1)" in started[0] and "(attempt 2)" in started[1]
    assert "worker stopped responding; queued again" in messages
    assert sum(m.startswith("finished") for m in messages) == 1  # completed exactly once


def _job_events(api: httpx.Client, job_id: str) -> list[dict[str, Any]]:
    """The job's progress events, read from its event stream (which ends with the job)."""
    with api.stream("GET", f"/api/research/{job_id}/events") as response:
        data = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    return [event for event in data if "phase" in event]
