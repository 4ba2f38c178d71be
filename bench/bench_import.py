"""How fast is ``crowdsift archive import``, and how big is what it builds?

Generates a deterministic synthetic Pushshift-style ``.zst`` NDJSON file (submissions and
comments with the full field sets of real dumps, realistic text sizes) in a temp dir, then
measures:

(a) the floor: stream-decompress and parse every line with the fastest parser at hand
    (``orjson`` and the stdlib ``json`` are both timed; the faster one is the floor);
(b) our import into a fresh archive: compression, both full-text indexes, everything;
(c) DuckDB ``read_json`` over the same data, for perspective.

Figures: import records/s over the floor's (target >= 0.30), and the archive's size over
the zstd dump's (target <= 4, goal 3).
Usage: ``python bench/bench_import.py [--records N]``. ``main()`` returns the figures.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import zstandard

from crowdsift.core.log import configure_logging
from crowdsift.sources.archive.importer import import_files
from figures import Figure, exit_code

TARGET_RATIO = 0.30
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
    """Run the measurements (best of 3 for the floors and the import); print; return."""
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
        duck = duckdb_read(dump, tmp)
    if report.posts + report.comments != n:
        raise SystemExit(f"import stored {report.posts + report.comments} of {n} records")
    result: dict[str, Any] = {
        "records": float(n),
        "dump_mb": round(size / 1e6, 2),
        "archive_mb": round(archive_bytes / 1e6, 2),
        "floor_parser": parser,
        "floor_records_per_s": round(n / floor_s),
        "import_records_per_s": round(n / import_s),
        "import_over_floor": round(floor_s / import_s, 3),
        "archive_over_dump": round(archive_bytes / size, 2),
    }
    if duck is not None:
        result["duckdb_records_per_s"] = round(n / duck[0])
    print(f"synthetic dump: {n:,} records, {result['dump_mb']} MB zstd")
    for name, (_, seconds) in floors.items():
        print(f"parse ({name}):{n / seconds:>12,.0f} records/s")
    print(f"archive import: {result['import_records_per_s']:>10,.0f} records/s")
    if duck is not None:
        print(f"duckdb read:    {result['duckdb_records_per_s']:>10,.0f} records/s ({duck[1]})")
    print(
        f"archive import: {result['import_over_floor']:.2f}x of the parse floor ({parser}; "
        f"target >= {TARGET_RATIO:.2f})"
    )
    print(
        f"archive size:   {result['archive_mb']} MB, {result['archive_over_dump']:.2f}x the "
        f"zstd dump (target <= {TARGET_SIZE:g}, goal 3)"
    )
    result["figures"] = [
        Figure(
            bench="import",
            name="archive import throughput",
            value=n / import_s,
            baseline=n / floor_s,
            unit="records/s",
            target=TARGET_RATIO,
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
