"""Parsing in worker processes (``crowdsift.sources.archive.parallel``) writes what in-process
parsing writes, reports the same, and fails loudly, never hanging and never leaving a process
behind.

The parallel path is forced on small files (``parallel_min_bytes=0``, small chunks). With
``LOCAL_AHEAD = 0`` the importing process parses nothing itself, so every chunk goes through a
worker; with the default it also parses while the worker starts and whenever it is ahead.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard

from crowdsift.core.config import get_settings
from crowdsift.core.errors import ArchiveError
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.archive import parallel
from crowdsift.sources.archive.importer import MAX_BAD_LINES_KEPT, ImportProgress, import_files

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SALT = b"parallel-import-test-salt-32byte"
POLICY = AuthorPolicy(SALT)
TIMEOUT_S = 60.0
AUTHORS = ["alice_w", "Bob-Q", "carol_9", "[deleted]", "AutoModerator", None, "d\u00e9j\u00e0_vu"]


# --- a dump with everything a real one has --------------------------------------------------


def _post(rng: random.Random, n: int, retrieved: int) -> dict[str, Any]:
    author = rng.choice(AUTHORS)
    record: dict[str, Any] = {
        "id": f"p{n}",
        "subreddit": rng.choice(["Headphones", "audiophile"]),
        "author": author,
        "author_fullname": None if author in (None, "[deleted]") else f"t2_{n:x}",
        "title": f"sony battery post {n} " + rng.choice(["bass", "anc", "fit"]),
        "selftext": " ".join(rng.choices(["noise", "cancel", "comfort", "case"], k=12)),
        "score": rng.randrange(-5, 500),
        "num_comments": rng.randrange(40),
        "created_utc": 1_700_000_000 + n,
        "retrieved_on": retrieved,
        "permalink": f"/r/x/comments/p{n}/slug/",
    }
    if n % 7 == 0:  # a crosspost names the original's author too
        record["crosspost_parent_list"] = [{"id": f"x{n}", "author": "nested_name", "title": "o"}]
    if n % 11 == 0:
        record["approved_by"] = "some_moderator"
    return record


def _comment(rng: random.Random, n: int, posts: int, retrieved: int) -> dict[str, Any]:
    link = f"p{rng.randrange(posts)}"
    parent = rng.choice([f"t3_{link}", f"t1_c{max(0, n - 1)}", link])  # a bare id too
    return {
        "id": f"c{n}",
        "link_id": f"t3_{link}",
        "parent_id": parent,
        "subreddit": "Headphones",
        "author": rng.choice(AUTHORS),
        "body": " ".join(rng.choices(["sony", "battery", "great", "meh", "cable"], k=20)),
        "score": rng.randrange(100),
        "created_utc": 1_700_000_100 + n,
        "retrieved_on": retrieved,
    }


ODD_LINES = [
    "this is not json",
    "[1, 2, 3]",
    '{"subreddit": "Headphones", "title": "no id"}',
    "",
    "   ",
    '{"_meta": {"note": "neither post nor comment"}}',
    '{"id": "s1", "subreddit": "Headphones", "title": "emoji \\ud83d\\ude00 sony"}',
    '{"id": "s2", "subreddit": "Headphones", "title": "lone \\ud83d surrogate sony"}',
    '{"kind": "t3", "data": {"id": "w1", "subreddit": "audiophile", "title": "wrapped sony"}}',
    '{"id": "q1", "subreddit": "Headphones", "title": "string time", "created_utc": "17e8"}',
    b'{"id": "u1", "subreddit": "Headphones", "title": "invalid \xff utf-8 sony"}',
    b'{"id": "u2", "subreddit": "Headphones", "title": "cut at the end \xe2\x82',
]


def dump_lines(records: int = 1200, seed: int = 3) -> list[str | bytes]:
    """Posts and comments, some ids seen again (newer, older, equally old), and every odd line
    (bytes: not valid UTF-8) somewhere."""
    rng = random.Random(seed)
    lines: list[str | bytes] = []
    posts = max(1, records // 4)
    for n in range(records):
        retrieved = 1_700_100_000 + rng.randrange(3)  # ties are common
        record = _post(rng, n, retrieved) if n < posts else _comment(rng, n, posts, retrieved)
        lines.append(json.dumps(record))
        if rng.random() < 0.08:  # the same id again, near (same batch) or far (a later one)
            again = dict(record, score=rng.randrange(1000), retrieved_on=retrieved - 1 + n % 3)
            lines.insert(rng.randrange(max(1, len(lines) - 300), len(lines) + 1), json.dumps(again))
    for odd in ODD_LINES:  # each of them, anywhere
        lines.insert(rng.randrange(len(lines) + 1), odd)
    return lines


def encoded(lines: list[str] | list[str | bytes]) -> bytes:
    return b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines)


def write_zst(path: Path, lines: list[str] | list[str | bytes]) -> Path:
    path.write_bytes(zstandard.ZstdCompressor(level=1).compress(encoded(lines) + b"\n"))
    return path


# --- what an archive holds, and which processes exist -----------------------------------------


def contents(archive: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (rowids included) and the FTS index itself, term by term."""
    conn = sqlite3.connect(archive)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, posts_fts, instance)")
        conn.execute("INSERT INTO posts_fts(posts_fts) VALUES('integrity-check')")
        return {
            "posts": conn.execute("SELECT rowid, * FROM posts ORDER BY rowid").fetchall(),
            "comments": conn.execute("SELECT rowid, * FROM comments ORDER BY rowid").fetchall(),
            "meta": conn.execute("SELECT * FROM meta ORDER BY key").fetchall(),
            "fts": conn.execute("SELECT * FROM temp.vocab ORDER BY 1, 2, 3, 4").fetchall(),
        }
    finally:
        conn.close()


def children(pid: int, *, zombies: bool = True) -> set[int]:
    """The child processes of ``pid`` (from /proc), zombies included unless told otherwise."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        state, parent = fields[0], int(fields[1])
        if parent == pid and (zombies or state != "Z"):
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has ended: its parent, maybe PID 1, reaps it late)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(check: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout} s waiting until {what}")
        time.sleep(0.02)


def within_timeout(work: Callable[[], Any]) -> Any:
    """``work()`` on a thread, failing the test instead of hanging it."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(TIMEOUT_S)
    assert not thread.is_alive(), f"the import hung for {TIMEOUT_S} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few records, so a small file makes many."""
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 3000)


@pytest.fixture
def workers_only(monkeypatch: pytest.MonkeyPatch, small_chunks: None) -> None:
    """The importing process parses nothing itself: every chunk goes through a worker."""
    monkeypatch.setattr(parallel, "LOCAL_AHEAD", 0)


@pytest.fixture
def no_worker_started(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(parallel, "_Worker", refuse)


def run(paths: list[Path], archive: Path, workers: int, **options: Any) -> Any:
    options.setdefault("authors", POLICY)
    return import_files(paths, archive, workers=workers, parallel_min_bytes=0, **options)


def report_of(report: Any) -> dict[str, Any]:
    files = [f.model_dump(exclude={"path"}) for f in report.files]
    return {**report.model_dump(exclude={"archive", "files", "elapsed_seconds"}), "files": files}


def _who_parses(monkeypatch: pytest.MonkeyPatch, helping: bool) -> dict[str, list[int]]:
    """Chunks parsed here and by workers (their first line numbers), recorded.

    Helping, its parsing is slowed down so that a worker starts before the file is done and
    both parse parts of it; else it parses nothing."""
    if not helping:
        monkeypatch.setattr(parallel, "LOCAL_AHEAD", 0)
    parsed: dict[str, list[int]] = {"here": [], "by workers": []}
    prepare, result = parallel.prepare_chunk, parallel.ParseWorkers._result

    def slow(block: bytes, first_line_no: int, *args: Any) -> parallel.PreparedChunk:
        parsed["here"].append(first_line_no)
        time.sleep(0.05)
        return prepare(block, first_line_no, *args)

    def counted(pool: parallel.ParseWorkers, *args: Any) -> parallel.PreparedChunk:
        chunk = result(pool, *args)
        parsed["by workers"].append(chunk.first_line_no)
        return chunk

    monkeypatch.setattr(parallel, "prepare_chunk", slow)
    monkeypatch.setattr(parallel.ParseWorkers, "_result", counted)
    return parsed


# --- the same archive, the same report ----------------------------------------------------------


@pytest.mark.parametrize("helping", [False, True], ids=["workers-only", "helping"])
@pytest.mark.parametrize("keep_usernames", [False, True], ids=["hashed", "kept"])
def test_parallel_import_writes_and_reports_what_in_process_parsing_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: None, helping: bool,
    keep_usernames: bool,
) -> None:  # fmt: skip
    parsed = _who_parses(monkeypatch, helping)
    policy = AuthorPolicy(SALT, keep_usernames=keep_usernames)
    posts_file = write_zst(tmp_path / "RS_gen.zst", dump_lines(1200, seed=3))
    comments_file = write_zst(tmp_path / "RC_gen.ndjson.zst", dump_lines(900, seed=4))
    plain = tmp_path / "RC_plain.ndjson"
    plain.write_bytes(encoded(dump_lines(300, seed=5)))  # no newline after the last line
    files = [posts_file, comments_file, plain]
    options: dict[str, Any] = {"batch_size": 37, "authors": policy}

    serial = run(files, tmp_path / "serial.sqlite", 0, **options)
    before = children(os.getpid())
    two_ways = run(files, tmp_path / "parallel.sqlite", 1, **options)

    assert children(os.getpid()) == before  # every worker has exited and been reaped
    assert parsed["by workers"]
    assert bool(parsed["here"]) is helping  # helping: here while the worker started at least
    assert report_of(two_ways) == report_of(serial)
    assert serial.bad_lines > 0 and serial.skipped > 0 and serial.comments > 0
    assert contents(tmp_path / "parallel.sqlite") == contents(tmp_path / "serial.sqlite")


def test_bad_lines_keep_their_numbers_across_chunks(
    tmp_path: Path, kit: Any, workers_only: None
) -> None:
    lines = kit.to_lines([kit.post(f"p{n}", selftext="x" * 400) for n in range(200)])
    bad_at = [3, 41, 42, 150, 151, 152, 199]
    for line_no in bad_at:
        lines.insert(line_no - 1, f"broken line {line_no}")
    lines.insert(100, "")  # a blank line counts for numbering, not as a line read
    for _ in range(MAX_BAD_LINES_KEPT + 5):
        lines.append("[]")
    path = write_zst(tmp_path / "RS_bad.zst", lines)

    (report,) = run([path], tmp_path / "a.sqlite", 1).files
    (expected,) = run([path], tmp_path / "b.sqlite", 0).files

    assert report == expected
    assert report.bad_lines == len(bad_at) + MAX_BAD_LINES_KEPT + 5
    numbers = [bad.line_no for bad in report.first_bad_lines]
    assert numbers[: len(bad_at)] == [n if n <= 100 else n + 1 for n in bad_at]
    assert len(numbers) == MAX_BAD_LINES_KEPT
    assert report.first_bad_lines[0].reason.startswith("not JSON")


def test_progress_arrives_per_batch_as_in_process(
    tmp_path: Path, kit: Any, workers_only: None
) -> None:
    path = write_zst(tmp_path / "RS_p.zst", kit.to_lines([kit.post(f"p{n}") for n in range(90)]))
    events: dict[int, list[ImportProgress]] = {0: [], 1: []}
    for workers in (0, 1):
        archive = tmp_path / f"{workers}.sqlite"
        run([path], archive, workers, progress=events[workers].append, batch_size=20)
    assert [e.records for e in events[1]] == [e.records for e in events[0]] == [20, 40, 60, 80, 90]
    assert events[1][-1].bytes_read == path.stat().st_size


def test_a_truncated_file_keeps_what_was_read_and_says_so(
    tmp_path: Path, kit: Any, workers_only: None
) -> None:
    lines = kit.to_lines([kit.post(f"t{n}", selftext="y" * 300) for n in range(1500)])
    data = zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode())
    path = tmp_path / "RS_cut.zst"
    path.write_bytes(data[: len(data) * 2 // 3])

    (report,) = run([path], tmp_path / "a.sqlite", 1).files
    (expected,) = run([path], tmp_path / "b.sqlite", 0).files

    assert report.error is not None and "truncated" in report.error
    assert report == expected
    assert 0 < report.posts < 1500
    assert contents(tmp_path / "a.sqlite") == contents(tmp_path / "b.sqlite")


def test_small_files_and_api_json_stay_in_process(
    tmp_path: Path, kit: Any, no_worker_started: None
) -> None:
    small = write_zst(tmp_path / "RS_small.zst", kit.to_lines([kit.post("a"), kit.post("b")]))
    listing = {"kind": "Listing", "data": {"children": [{"kind": "t3", "data": kit.post("c")}]}}
    api = tmp_path / "saved.json"
    api.write_text(json.dumps(listing), encoding="utf-8")

    report = import_files([small, api], tmp_path / "a.sqlite", workers=1, authors=POLICY)
    forced = run([api], tmp_path / "b.sqlite", 1)

    assert report.posts == 3 and report.ok
    assert forced.posts == 1 and forced.files[0].format == "api-json"


def test_the_setting_can_keep_parsing_in_process(
    tmp_path: Path, kit: Any, no_worker_started: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROWDSIFT_IMPORT_WORKERS", "0")
    get_settings.cache_clear()
    path = write_zst(tmp_path / "RS.zst", kit.to_lines([kit.post("a"), kit.post("b")]))
    report = import_files([path], tmp_path / "a.sqlite", parallel_min_bytes=0, authors=POLICY)
    assert report.posts == 2 and report.ok


# --- failures: a clear error, no hang, nothing left running -------------------------------------


def big_dump(tmp_path: Path, kit: Any, records: int = 3000) -> Path:
    """Far more chunks than are ever in flight, so a dead worker is always noticed."""
    posts = [kit.post(f"k{n}", title=f"sony {n}", selftext="z" * 300) for n in range(records)]
    return write_zst(tmp_path / "RS_big.zst", kit.to_lines(posts))


def test_a_worker_killed_mid_import_is_a_clear_error_and_a_rerun_completes(
    tmp_path: Path, kit: Any, workers_only: None
) -> None:
    path = big_dump(tmp_path, kit)
    archive = tmp_path / "a.sqlite"
    before = children(os.getpid())

    def kill_the_worker(_event: ImportProgress) -> None:
        for pid in children(os.getpid(), zombies=False) - before:
            os.kill(pid, signal.SIGKILL)

    with pytest.raises(ArchiveError) as failure:
        within_timeout(lambda: run([path], archive, 1, progress=kill_the_worker, batch_size=100))

    message = str(failure.value)
    assert "killed by SIGKILL" in message and str(path) in message
    assert "run the same import again" in message and "CROWDSIFT_IMPORT_WORKERS=0" in message
    assert children(os.getpid()) == before
    committed = contents(archive)["posts"]
    assert committed and len(committed) % 100 == 0  # whole batches only

    report = within_timeout(lambda: run([path], archive, 1, batch_size=100))
    assert report.ok and report.posts == 3000
    run([path], tmp_path / "clean.sqlite", 0, batch_size=100)
    clean = contents(tmp_path / "clean.sqlite")
    assert {r[1:] for r in contents(archive)["posts"]} == {r[1:] for r in clean["posts"]}


def test_a_worker_that_raises_is_a_clear_error(
    tmp_path: Path, kit: Any, workers_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from crowdsift.sources.archive import parse_worker as worker\n"
        "def boom(*args):\n    raise ValueError('boom')\n"
        "worker.prepare_chunk = boom; worker.serve(int(sys.argv[2]), int(sys.argv[3]))"
    )
    monkeypatch.setattr(parallel, "_WORKER_CODE", broken)
    before = children(os.getpid())

    with pytest.raises(ArchiveError, match=r"parsing worker failed .*ValueError: boom"):
        within_timeout(lambda: run([big_dump(tmp_path, kit)], tmp_path / "a.sqlite", 1))
    assert children(os.getpid()) == before


def test_a_worker_that_cannot_start_is_a_clear_error(
    tmp_path: Path, kit: Any, workers_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "_WORKER_CODE", "import sys; sys.exit(3)")
    with pytest.raises(ArchiveError, match="exited with code 3"):
        within_timeout(lambda: run([big_dump(tmp_path, kit, 200)], tmp_path / "a.sqlite", 1))


DRIVER = """
import signal, sys, time
from pathlib import Path

# A process started from a terminal: Ctrl-C delivered and raised. The test harness's thread may
# hand its children SIGINT blocked or ignored (both survive exec), which no user's shell does.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
signal.signal(signal.SIGINT, signal.default_int_handler)
from crowdsift.sources.archive import parallel
from crowdsift.sources.archive.importer import import_files
from crowdsift.core.privacy import AuthorPolicy

parallel.LOCAL_AHEAD = 0
parallel.CHUNK_BYTES = 3000

def stall(event):
    print("committed", flush=True)
    time.sleep(120)

import_files([Path(sys.argv[1])], Path(sys.argv[2]), progress=stall, batch_size=100,
             workers=1, parallel_min_bytes=0, authors=AuthorPolicy(b"x" * 32))
"""


@pytest.fixture
def stalled_import(tmp_path: Path, kit: Any) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """An import in its own process (and process group), stalled after its first batch, and
    its worker's pid."""
    command = [sys.executable, "-c", DRIVER, str(big_dump(tmp_path, kit)), str(tmp_path / "a.db")]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        with selectors.DefaultSelector() as selector:
            assert process.stdout is not None
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(TIMEOUT_S), "the import never committed a batch"
            assert process.stdout.readline() == "committed\n", process.communicate()[1]
        (worker,) = children(process.pid, zombies=False)
        yield process, worker
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(TIMEOUT_S)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_workers_exit_when_the_importing_process_is_killed(
    stalled_import: tuple[subprocess.Popen[str], int],
) -> None:
    process, worker = stalled_import
    process.kill()
    process.wait(TIMEOUT_S)
    wait_until(lambda: not alive(worker), "the orphaned worker exited")


def test_ctrl_c_stops_the_import_without_tracebacks_from_workers(
    stalled_import: tuple[subprocess.Popen[str], int], tmp_path: Path
) -> None:
    process, worker = stalled_import
    os.killpg(process.pid, signal.SIGINT)  # what a terminal does: the whole process group
    _, stderr = process.communicate(timeout=TIMEOUT_S)

    assert process.returncode != 0
    assert stderr.count("Traceback") == 1 and stderr.rstrip().endswith("KeyboardInterrupt")
    assert not alive(worker)
    conn = sqlite3.connect(tmp_path / "a.db")
    try:
        assert conn.execute("SELECT count(*) FROM posts").fetchone()[0] >= 100
    finally:
        conn.close()
