"""How fast is ``crowdsift archive import``, and how big is what it builds?

Generates a deterministic synthetic Pushshift-style ``.zst`` NDJSON file (submissions and
comments with the full field sets of real dumps, realistic text sizes) in a temp dir, then
measures:

(a) the floor: stream-decompress and parse every line with the fastest parser at hand
    (``orjson`` and the stdlib ``json`` are both timed; the faster one is the floor);
(b) our import into a fresh archive: compression, both full-text indexes, everything; timed
    in-process (``import_files``) and as a user runs it (the ``crowdsift archive import`` CLI,
    a new process reading the ``.zst``);
(c) the peer: ``sqlite-utils insert --nl`` of the posts and of the comments into two tables,
    then ``sqlite-utils enable-fts --fts5`` on posts (title, selftext) and comments (body), what
    our import indexes; four CLI runs, as a user would type them. sqlite-utils cannot read zstd,
    so it gets the dump decompressed and split by kind beforehand, untimed: that favours the
    peer (our CLI is charged its decompression). Each side pays its process start-ups;
(d) DuckDB ``read_json`` over the same data, for perspective.

Figures: the CLI import's records/s over the peer's (target >= 2.5, the issue's import target);
the in-process import's records/s over the parse floor's (reported, no target: the import
target was restated as the sqlite-utils one); the archive's size over the zstd dump's
(target <= 4, goal 3). Best of 3 for every timed side but DuckDB. A peer that stores fewer
records than the dump holds, or that beats the parse floor, is a broken measurement: the run
exits with the reason instead of a figure.
Usage: ``python bench/bench_import.py [--records N]``. ``main()`` returns the figures.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import zstandard

from crowdsift.core.log import configure_logging
from crowdsift.sources.archive.importer import import_files
from figures import Figure, exit_code

TARGET_PEER = 2.5
TARGET_SIZE = 4.0
_WORDS = [
    "the",
    "a",
    "to",
    "and",
    "of",
    "i",
    "it",
    "is",
    "for",
    "that",
    "you",
    "in",
    "my",
    "with",
    "this",
    "on",
    "have",
    "but",
    "be",
    "not",
    "was",
    "are",
    "just",
    "battery",
    "sound",
    "noise",
    "cancelling",
    "headphones",
    "sony",
    "bose",
    "anc",
    "comfort",
    "fit",
    "bass",
    "treble",
    "case",
    "cable",
    "bluetooth",
    "codec",
    "ldac",
    "aptx",
    "latency",
    "mic",
    "call",
    "quality",
    "price",
    "worth",
    "return",
    "warranty",
    "amazon",
    "review",
    "week",
    "month",
    "year",
    "daily",
    "commute",
    "gym",
    "office",
    "travel",
    "flight",
    "update",
    "firmware",
    "app",
    "eq",
    "setting",
    "volume",
    "left",
    "right",
    "ear",
    "cup",
    "pad",
    "band",
    "clamp",
    "pressure",
    "weight",
    "build",
    "plastic",
]
_SUBS = ["headphones", "audiophile", "buyitforlife", "homeimprovement", "running", "sony"]


def _text(rng: random.Random, mean_words: float) -> str:
    n = max(1, int(rng.lognormvariate(0, 1) * mean_words))
    words = rng.choices(_WORDS, k=n)
    return " ".join(words).capitalize() + "."


def _submission(rng: random.Random, i: int, ts: int) -> dict[str, Any]:
    sid = f"s{i:07x}"
    sub = rng.choice(_SUBS)
    title = _text(rng, 9)[:300]
    return {
        "all_awardings": [],
        "allow_live_comments": False,
        "archived": False,
        "author": f"user_{rng.randrange(50_000)}",
        "author_flair_css_class": None,
        "author_flair_richtext": [],
        "author_flair_text": None,
        "author_flair_type": "text",
        "author_fullname": f"t2_{rng.randrange(10**8):x}",
        "author_patreon_flair": False,
        "author_premium": False,
        "awarders": [],
        "can_gild": True,
        "category": None,
        "content_categories": None,
        "contest_mode": False,
        "created_utc": ts,
        "discussion_type": None,
        "distinguished": None,
        "domain": f"self.{sub}",
        "edited": False,
        "gilded": 0,
        "gildings": {},
        "hidden": False,
        "id": sid,
        "is_created_from_ads_ui": False,
        "is_crosspostable": True,
        "is_meta": False,
        "is_original_content": False,
        "is_reddit_media_domain": False,
        "is_robot_indexable": True,
        "is_self": True,
        "is_video": False,
        "link_flair_background_color": "",
        "link_flair_css_class": None,
        "link_flair_richtext": [],
        "link_flair_text": None,
        "link_flair_text_color": "dark",
        "link_flair_type": "text",
        "locked": False,
        "media": None,
        "media_embed": {},
        "media_only": False,
        "name": f"t3_{sid}",
        "no_follow": rng.random() < 0.5,
        "num_comments": rng.randrange(200),
        "num_crossposts": 0,
        "over_18": False,
        "parent_whitelist_status": "all_ads",
        "permalink": f"/r/{sub}/comments/{sid}/slug/",
        "pinned": False,
        "pwls": 6,
        "quarantine": False,
        "removed_by_category": None,
        "retrieved_on": ts + 86_400,
        "score": int(rng.paretovariate(1.2)),
        "secure_media": None,
        "secure_media_embed": {},
        "selftext": _text(rng, 90) if rng.random() < 0.85 else "",
        "send_replies": True,
        "spoiler": False,
        "stickied": False,
        "subreddit": sub,
        "subreddit_id": "t5_2qh1c",
        "subreddit_subscribers": 812_345,
        "subreddit_type": "public",
        "thumbnail": "self",
        "title": title,
        "total_awards_received": 0,
        "treatment_tags": [],
        "upvote_ratio": round(rng.random(), 2),
        "url": f"https://www.reddit.com/r/{sub}/comments/{sid}/slug/",
        "whitelist_status": "all_ads",
        "wls": 6,
    }


def _comment(rng: random.Random, i: int, ts: int, link: str, sub: str) -> dict[str, Any]:
    return {
        "all_awardings": [],
        "archived": False,
        "associated_award": None,
        "author": f"user_{rng.randrange(50_000)}",
        "author_flair_css_class": None,
        "author_flair_richtext": [],
        "author_flair_text": None,
        "author_flair_type": "text",
        "author_fullname": f"t2_{rng.randrange(10**8):x}",
        "author_patreon_flair": False,
        "author_premium": False,
        "body": _text(rng, 35),
        "can_gild": True,
        "collapsed": False,
        "collapsed_reason": None,
        "controversiality": 0,
        "created_utc": ts,
        "distinguished": None,
        "edited": False,
        "gilded": 0,
        "gildings": {},
        "id": f"c{i:07x}",
        "is_submitter": False,
        "link_id": f"t3_{link}",
        "locked": False,
        "no_follow": True,
        "parent_id": f"t3_{link}",
        "permalink": f"/r/{sub}/comments/{link}/slug/c{i:07x}/",
        "retrieved_on": ts + 86_400,
        "score": int(rng.paretovariate(1.5)),
        "send_replies": True,
        "stickied": False,
        "subreddit": sub,
        "subreddit_id": "t5_2qh1c",
        "subreddit_name_prefixed": f"r/{sub}",
        "subreddit_type": "public",
        "total_awards_received": 0,
        "treatment_tags": [],
    }


def make_dump(path: Path, records: int, seed: int = 7) -> int:
    """Write ``records`` lines (about 1 submission per 4 comments); returns bytes on disk."""
    rng = random.Random(seed)
    ts = 1_650_000_000
    posts: list[tuple[str, str]] = []
    cctx = zstandard.ZstdCompressor(level=3)
    with path.open("wb") as fh, cctx.stream_writer(fh) as out:
        for i in range(records):
            ts += rng.randrange(1, 60)
            if not posts or rng.random() < 0.2:
                record = _submission(rng, i, ts)
                posts.append((record["id"], record["subreddit"]))
            else:
                link, sub = rng.choice(posts[-500:])
                record = _comment(rng, i, ts, link, sub)
            out.write(json.dumps(record).encode() + b"\n")
    return path.stat().st_size


def floor(path: Path, parser: str = "orjson") -> int:
    """Decompress and parse every line; nothing else.

    orjson reads the UTF-8 bytes itself; the stdlib gets ``str`` (``json.loads(bytes)``
    decodes with "surrogatepass", markedly slower): each parser at its fastest.
    """
    n = 0
    dctx = zstandard.ZstdDecompressor(max_window_size=2**31)
    with path.open("rb") as fh, dctx.stream_reader(fh, read_across_frames=True) as reader:
        lines = io.BufferedReader(reader, 1 << 20)  # type: ignore[arg-type]
        if parser == "orjson":
            for line in lines:
                orjson.loads(line)
                n += 1
        else:
            for line in lines:
                json.loads(line.decode("utf-8"))
                n += 1
    return n


def duckdb_read(path: Path, tmp: Path) -> tuple[float, str] | None:
    """Seconds for DuckDB to load the same records and how it read them; None without DuckDB.

    DuckDB reads zstd NDJSON itself; if this build cannot, the file is decompressed first
    and only DuckDB's own read is timed.
    """
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect()
    try:
        started = time.perf_counter()
        try:
            con.execute(
                "CREATE TABLE t AS SELECT * FROM read_json(?, format = 'newline_delimited', "
                "compression = 'zstd')",
                [str(path)],
            )
            return time.perf_counter() - started, "zstd directly"
        except duckdb.Error:
            plain = tmp / "plain.ndjson"
            dctx = zstandard.ZstdDecompressor(max_window_size=2**31)
            with path.open("rb") as src, plain.open("wb") as dst:
                dctx.copy_stream(src, dst)
            started = time.perf_counter()
            con.execute("CREATE TABLE t AS SELECT * FROM read_json(?)", [str(plain)])
            return time.perf_counter() - started, "decompressed .ndjson"
    finally:
        con.close()


def split_dump(path: Path, tmp: Path) -> dict[str, Path]:
    """Decompress the dump into one plain NDJSON file per kind, lines unchanged: what a
    sqlite-utils user would prepare (``posts`` have a ``title``, ``comments`` a ``body``)."""
    files = {"posts": tmp / "posts.ndjson", "comments": tmp / "comments.ndjson"}
    dctx = zstandard.ZstdDecompressor(max_window_size=2**31)
    with (
        path.open("rb") as fh,
        dctx.stream_reader(fh, read_across_frames=True) as reader,
        files["posts"].open("wb") as posts,
        files["comments"].open("wb") as comments,
    ):
        for line in io.BufferedReader(reader, 1 << 20):  # type: ignore[arg-type]
            (posts if "title" in orjson.loads(line) else comments).write(line)
    return files


def _tool(name: str) -> str:
    """A console script of this venv, next to the running interpreter."""
    script = Path(sys.executable).with_name(name)
    if not script.exists():
        raise SystemExit(f"{script} is missing: `make install` installs the dev extra")
    return str(script)


def _run(command: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def sqlite_utils_import(files: dict[str, Path], target: Path) -> Path:
    """The peer, as a user runs it: insert each kind, then enable FTS5 on what we index."""
    tool = _tool("sqlite-utils")
    for table, source in files.items():
        _run([tool, "insert", str(target), table, str(source), "--nl"])
    _run([tool, "enable-fts", str(target), "posts", "title", "selftext", "--fts5"])
    _run([tool, "enable-fts", str(target), "comments", "body", "--fts5"])
    return target


def peer_records(target: Path) -> int:
    """Rows the peer stored, checked against its two full-text indexes."""
    con = sqlite3.connect(target)
    try:
        rows = 0
        for table in ("posts", "comments"):
            (stored,) = con.execute(f"SELECT count(*) FROM {table}").fetchone()
            (indexed,) = con.execute(f"SELECT count(*) FROM {table}_fts_docsize").fetchone()
            if indexed != stored:
                raise SystemExit(f"sqlite-utils indexed {indexed} of {stored} {table}")
            rows += stored
        return int(rows)
    finally:
        con.close()


def cli_import(dump: Path, target: Path, home: Path) -> dict[str, Any]:
    """``crowdsift archive import`` in a new process, as a user runs it; its JSON report."""
    env = {**os.environ, "CROWDSIFT_HOME": str(home)}
    command = [_tool("crowdsift"), "archive", "import", str(dump), "--archive", str(target)]
    # the records and their full-text index: the work the peer does (search by meaning is an
    # index the peer does not build; ``embed_cost`` measures it on its own)
    report: dict[str, Any] = json.loads(_run([*command, "--json", "--no-embed"], env))
    return report


def embed_cost(archive: Path, import_s: float) -> dict[str, float]:
    """``crowdsift archive embed`` on a copy of a built archive, as a user adds search by
    meaning: threads per second, bytes per thread, and its time over the import's."""
    from crowdsift.engines.embedding import MiniLMEmbedder
    from crowdsift.sources.archive.vectors import embed_archive

    copy = archive.with_name("embedded.sqlite")
    copy.write_bytes(archive.read_bytes())
    before = _size(copy)
    embedder = MiniLMEmbedder()
    embedder.embed(["load the model first"])  # its start-up is not the per-thread cost
    started = time.perf_counter()
    report = embed_archive(copy, embedder)
    seconds = time.perf_counter() - started
    return {
        "threads": float(report.embedded),
        "embed_s": round(seconds, 2),
        "threads_per_s": round(report.embedded / seconds, 1),
        "bytes_per_thread": round((_size(copy) - before) / max(1, report.embedded)),
        "over_import": round(seconds / import_s, 2),
    }


def _best_of(runs: int, fn: Any, *args: Any) -> tuple[Any, float]:
    """The fastest of ``runs`` calls: the machine's noise only ever adds time."""
    best = float("inf")
    result: Any = None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - started)
    return result, best


def main(records: int = 50_000) -> dict[str, Any]:
    """Run the measurements (best of 3 for the floors, both imports and the peer); print."""
    configure_logging("WARNING")  # the import logs a summary per file at INFO
    with tempfile.TemporaryDirectory(prefix="crowdsift-bench-") as tmpdir:
        tmp = Path(tmpdir)
        dump = tmp / "RS_bench.zst"
        size = make_dump(dump, records)
        floors = {parser: _best_of(3, floor, dump, parser) for parser in ("orjson", "json")}
        parser = min(floors, key=lambda name: floors[name][1])
        n, floor_s = floors[parser]
        targets = iter(tmp / f"bench-{i}.sqlite" for i in range(3))
        built: list[Path] = []

        def run_import() -> Any:
            target = next(targets)
            built.append(target)
            return import_files([dump], target)

        report, import_s = _best_of(3, run_import)
        archive_bytes = max(_size(path) for path in built)
        cli_targets = iter(tmp / f"cli-{i}.sqlite" for i in range(3))
        cli_report, cli_s = _best_of(3, lambda: cli_import(dump, next(cli_targets), tmp / "home"))
        split = split_dump(dump, tmp)
        peer_targets = iter(tmp / f"peer-{i}.db" for i in range(3))
        peer_db, peer_s = _best_of(3, lambda: sqlite_utils_import(split, next(peer_targets)))
        peer_n = peer_records(peer_db)
        duck = duckdb_read(dump, tmp)
        meaning = embed_cost(built[0], import_s)
    if report.posts + report.comments != n:
        raise SystemExit(f"import stored {report.posts + report.comments} of {n} records")
    if cli_report["posts"] + cli_report["comments"] != n:
        raise SystemExit(
            f"the import CLI stored {cli_report['posts']} + {cli_report['comments']} of {n} records"
        )
    if peer_n != n:
        raise SystemExit(f"sqlite-utils stored {peer_n} of {n} records")
    if peer_s < floor_s:
        raise SystemExit(f"sqlite-utils ({peer_s:.2f} s) beat the parse floor ({floor_s:.2f} s)")
    result: dict[str, Any] = {
        "records": float(n),
        "dump_mb": round(size / 1e6, 2),
        "archive_mb": round(archive_bytes / 1e6, 2),
        "floor_parser": parser,
        "floor_records_per_s": round(n / floor_s),
        "import_records_per_s": round(n / import_s),
        "import_over_floor": round(floor_s / import_s, 3),
        "cli_import_s": round(cli_s, 3),
        "cli_import_records_per_s": round(n / cli_s),
        "peer_s": round(peer_s, 3),
        "peer_records_per_s": round(n / peer_s),
        "cli_import_over_peer": round(peer_s / cli_s, 2),
        "archive_over_dump": round(archive_bytes / size, 2),
    }
    if duck is not None:
        result["duckdb_records_per_s"] = round(n / duck[0])
    print(f"synthetic dump: {n:,} records, {result['dump_mb']} MB zstd")
    for name, (_, seconds) in floors.items():
        print(f"parse ({name}):{n / seconds:>12,.0f} records/s")
    print(f"archive import: {result['import_records_per_s']:>10,.0f} records/s (in-process)")
    print(
        f"import CLI:     {result['cli_import_records_per_s']:>10,.0f} records/s "
        f"({cli_s:.2f} s, crowdsift archive import of the .zst)"
    )
    print(
        f"sqlite-utils:   {result['peer_records_per_s']:>10,.0f} records/s "
        f"({peer_s:.2f} s, insert --nl x2 + enable-fts --fts5 x2 of the plain split files)"
    )
    if duck is not None:
        print(f"duckdb read:    {result['duckdb_records_per_s']:>10,.0f} records/s ({duck[1]})")
    print(
        f"import CLI:     {result['cli_import_over_peer']:.2f}x sqlite-utils' rate "
        f"(target >= {TARGET_PEER:g}); in-process {peer_s / import_s:.2f}x"
    )
    print(
        f"archive import: {result['import_over_floor']:.2f}x of the parse floor ({parser}; "
        "no target)"
    )
    print(
        f"archive size:   {result['archive_mb']} MB, {result['archive_over_dump']:.2f}x the "
        f"zstd dump (target <= {TARGET_SIZE:g}, goal 3)"
    )
    print(
        f"search by meaning: {meaning['threads_per_s']:,.0f} threads/s ({meaning['threads']:,.0f} "
        f"threads in {meaning['embed_s']:.1f} s, {meaning['over_import']:.1f}x the import's time), "
        f"+{meaning['bytes_per_thread']:,.0f} bytes a thread (no target)"
    )
    result["embed"] = meaning
    result["figures"] = [
        Figure(
            bench="import",
            name="import / sqlite-utils insert+enable-fts",
            value=n / cli_s,
            baseline=n / peer_s,
            unit="records/s",
            target=TARGET_PEER,
            direction="at_least",
            baseline_name="sqlite-utils CLI",
        ),
        Figure(
            bench="import",
            name="archive import throughput",
            value=n / import_s,
            baseline=n / floor_s,
            unit="records/s",
            target=None,
            direction="at_least",
            baseline_name=f"parse floor, {parser}",
        ),
        Figure(
            bench="import",
            name="archive size",
            value=archive_bytes / 1e6,
            baseline=size / 1e6,
            unit="MB",
            target=TARGET_SIZE,
            direction="at_most",
            baseline_name="zstd dump",
        ),
    ]
    return result


def _size(archive: Path) -> int:
    """The archive's bytes on disk, side files included (the import leaves none)."""
    return sum(
        Path(f"{archive}{suffix}").stat().st_size
        for suffix in ("", "-wal", "-shm")
        if Path(f"{archive}{suffix}").exists()
    )


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=50_000)
    raise SystemExit(exit_code(main(parser.parse_args().records)["figures"]))


if __name__ == "__main__":
    _cli()
