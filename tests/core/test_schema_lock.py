"""Many processes, one data directory: schema creation is serialised and idempotent.

Two ``crowdsift`` processes started together on a fresh data directory used to race to
``CREATE TABLE`` and one died ("table comments already exists"). The lock is tested on its own
with an injected clock; the stores are tested with real processes released together.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import inspect

from crowdsift.core.schema_lock import SchemaLockTimeoutError, lock_path, schema_lock
from crowdsift.core.store import CommentStore, open_engine


class FakeClock:
    """A clock that only ``sleep`` moves: the wait runs in no wall-clock time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_second_holder_waits_and_gives_up_with_a_message_naming_the_lock(
    tmp_path: Path,
) -> None:
    database = tmp_path / "crowdsift.sqlite"
    clock = FakeClock()
    # the first holder opens the lock file on its own, as another process does
    with (
        schema_lock(database),
        pytest.raises(SchemaLockTimeoutError) as raised,
        schema_lock(database, timeout=3.0, clock=clock, sleep=clock.sleep),
    ):
        pytest.fail("the lock was taken twice")
    assert clock.now >= 3.0 and len(clock.slept) > 1  # it waited, then gave up
    message = str(raised.value)
    assert str(lock_path(database)) in message and "wait for it to finish" in message


def test_the_lock_is_free_again_after_the_block_and_its_file_stays(tmp_path: Path) -> None:
    database = tmp_path / "crowdsift.sqlite"
    clock = FakeClock()
    with schema_lock(database):
        pass
    with schema_lock(database, timeout=1.0, clock=clock, sleep=clock.sleep):
        assert clock.slept == []  # taken at once
    assert lock_path(database).is_file()


def test_the_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    database = tmp_path / "crowdsift.sqlite"
    clock = FakeClock()
    with pytest.raises(RuntimeError), schema_lock(database):
        raise RuntimeError("schema failed")
    with schema_lock(database, timeout=1.0, clock=clock, sleep=clock.sleep):
        assert clock.slept == []


def test_opening_the_comment_store_again_creates_nothing_twice(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'crowdsift.sqlite'}"
    CommentStore.from_url(url).close()
    store = CommentStore.from_url(url)  # the tables exist: checkfirst creates nothing
    try:
        assert store.count() == 0
    finally:
        store.close()
    engine = open_engine(url)
    try:
        assert "comments" in inspect(engine).get_table_names()
    finally:
        engine.dispose()


# --- real processes, released together ------------------------------------------------------

_OPEN_EVERY_STORE = """
import sys, time
from pathlib import Path
work, me, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
import numpy
from crowdsift.core.store import CommentStore
from crowdsift.engines.vector_cache import DiskVectorCache
from crowdsift.http.cache import SqliteResponseCache
from crowdsift.service.jobs.store import JobStore
from crowdsift.sources.archive import db
from crowdsift.sources.experts.db import SqlExpertStore
for round_ in range(rounds):
    home, go = work / f"home-{round_}", work / f"go-{round_}"
    (work / f"ready-{round_}-{me}").touch()
    while not go.exists():  # every process is here: they start together
        time.sleep(0.001)
    url = f"sqlite:///{home / 'crowdsift.sqlite'}"
    CommentStore.from_url(url).close()
    JobStore.from_url(url)
    SqlExpertStore(url)
    SqliteResponseCache(home / "cache.sqlite")
    cache = DiskVectorCache(home / "vectors.sqlite", timeout=30.0)
    cache.put_many({b"k": numpy.zeros(3, dtype="float32")})
    assert cache.get_many([b"k"]), "the vector cache turned itself off"
    db.connect(home / "archive.sqlite").close()
"""
PROCESSES, ROUNDS = 4, 6


def test_processes_started_together_on_a_fresh_directory_all_set_up_their_stores(
    tmp_path: Path,
) -> None:
    """Four processes open every store at the same moment, six rounds over, each round on a
    fresh directory; without the lock, most runs of this test fail."""
    logs = [tmp_path / f"process-{n}.log" for n in range(PROCESSES)]
    processes = []
    for n, log in enumerate(logs):
        with log.open("wb") as out:
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-c", _OPEN_EVERY_STORE, str(tmp_path), str(n), str(ROUNDS)],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    try:
        for round_ in range(ROUNDS):
            (tmp_path / f"home-{round_}").mkdir()
            ready = [tmp_path / f"ready-{round_}-{n}" for n in range(PROCESSES)]
            _wait_for(ready, processes)
            (tmp_path / f"go-{round_}").touch()
        codes = [process.wait(timeout=120) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    failures = [log.read_text() for log, code in zip(logs, codes, strict=True) if code]
    assert failures == [], failures[0][-2000:]


def _wait_for(flags: list[Path], processes: list[subprocess.Popen[bytes]]) -> None:
    """Until every child reached the start line (its flag exists), or one of them ended."""
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in flags):
        if any(process.poll() is not None for process in processes):
            return  # it failed: its output says why
        assert time.monotonic() < deadline, "the processes did not reach the start in 120 s"
        time.sleep(0.005)
