"""``crowdsift subreddits``: build the directory of real subreddits and see which suit a question.

``update`` fetches the directory keyless from Arctic Shift (one request per first character,
a progress line each on stderr) into ``<data dir>/subreddits.json``, keeping what an earlier
update found under prefixes not fetched now; then it profiles the biggest ``--profiles N``
entries from their newest posts (one request each, progress every ``PROGRESS_EVERY`` entries
on stderr, the file saved every ``SAVE_EVERY`` so an interrupted run keeps what it read).
``profile`` (re)builds profiles only. ``search`` shows the communities closest to a question
with the parts of their scores (meaning, words, name, size), so a user sees why; ``stats``
says how big and how old the directory is and how much of it is profiled. Exit status: 1 when
nothing could be fetched, when some prefixes or profiles failed (the rest is saved), or when
there is no directory (the message says what to run); 2 for a bad ``--prefixes`` or a
question under 3 characters.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from crowdsift.cli.support import check_question, error, exit_codes
from crowdsift.core.config import Settings, get_settings
from crowdsift.core.errors import UsageError
from crowdsift.core.text import utc_now

if TYPE_CHECKING:
    from crowdsift.engines.embedding import Embedder
    from crowdsift.sources.reddit.directory import SubredditDirectory
    from crowdsift.sources.reddit.directory_match import SubredditMatch

# The directory, its matching, Arctic Shift and the embedder (numpy) load when a
# ``subreddits`` command runs, not on every start of the CLI.

subreddits_app = typer.Typer(
    help=(
        "The directory of real subreddits (names, descriptions, sizes, what their recent "
        "threads talk about) that live searches choose from: build it keyless from Arctic "
        "Shift, and see which suit a question."
    ),
    no_args_is_help=True,
)
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
_PREFIX_CHARS = frozenset(string.ascii_lowercase + string.digits)
PROGRESS_EVERY = 10
"""A progress line per this many profiles (and one for the last)."""
SAVE_EVERY = 50
"""Profiles read between saves: about a minute at Arctic Shift's pace."""
SHOWN_FAILURES = 5
"""Failed profiles named one per line; the rest are counted."""
_PROFILE_COST = (
    "One request per community; Arctic Shift sustains about 0.8 requests a second, so 1,000 "
    "take about 20 minutes."
)


PrefixesOption = Annotated[
    str | None,
    typer.Option(
        "--prefixes",
        help="Fetch only subreddits starting with these characters, e.g. abc "
        "(default: a-z and 0-9). Others keep what the last update found.",
    ),
]
ProfilesOption = Annotated[
    int | None,
    typer.Option(
        "--profiles",
        min=0,
        help="Then profile the N biggest communities from their newest posts (default: "
        f"all, up to 1,000). {_PROFILE_COST} 0 skips it; the others keep their last "
        "profile.",
    ),
]


@subreddits_app.command("update")
def update_command(
    prefixes: PrefixesOption = None, profiles: ProfilesOption = None, as_json: JsonOption = False
) -> None:
    """Build or refresh the directory from Arctic Shift (keyless; one request per prefix),
    then profile its biggest communities (one request each)."""
    from crowdsift.sources.reddit.directory import (
        PROFILE_LIMIT,
        SubredditDirectoryError,
        directory_path,
        profile_targets,
        refresh_directory,
    )
    from crowdsift.sources.reddit.directory_fetch import prefix_fetch

    settings = get_settings()
    path = directory_path(settings)
    with exit_codes():
        chosen = _prefixes(prefixes)
    previous = _previous(path)

    def on_progress(done: int, total: int, entries: int) -> None:
        typer.echo(
            f"subreddits {chosen[done - 1]!r}: {done}/{total} prefixes, {entries:,} so far",
            err=True,
        )

    try:
        with prefix_fetch(settings) as fetch:
            directory = refresh_directory(
                fetch, prefixes=chosen, progress=on_progress, previous=previous
            )
    except SubredditDirectoryError as exc:
        error(
            f"{str(exc).rstrip('.')}. Check ARCTIC_SHIFT_BASE_URL "
            f"({settings.arctic_shift_base_url}) and the network, then run `crowdsift "
            "subreddits update` again"
        )
        raise typer.Exit(1) from None
    with exit_codes():
        directory.save(path)
    for prefix, reason in directory.failed_prefixes.items():
        error(f"prefix {prefix!r} failed: {reason}")
    names = profile_targets(directory, PROFILE_LIMIT if profiles is None else profiles)
    directory, failed_profiles = _profile(directory, names, path, settings)
    _report_update(directory, path, len(names), failed_profiles, as_json=as_json)
    if directory.failed_prefixes or failed_profiles:
        raise typer.Exit(1)


def _report_update(
    directory: SubredditDirectory,
    path: Path,
    profiled: int,
    failed_profiles: list[str],
    *,
    as_json: bool,
) -> None:
    """What ``subreddits update`` saved, and the prefixes and profiles that failed."""
    from crowdsift.sources.reddit.directory import MIN_SUBSCRIBERS, describe

    if as_json:
        typer.echo(json.dumps({"path": str(path), **describe(directory, utc_now())}, indent=2))
    else:
        typer.echo(
            f"saved {_subreddits(len(directory))} (SFW, at least {MIN_SUBSCRIBERS:,} "
            f"subscribers) to {path}"
        )
        if profiled:
            typer.echo(_profiled_line(profiled, failed_profiles))
    if directory.failed_prefixes:
        failed = "".join(directory.failed_prefixes)
        typer.echo(
            f"{len(failed)} prefix{'es' if len(failed) > 1 else ''} failed ({failed}); the rest "
            "is saved. Run "
            f"`crowdsift subreddits update --prefixes {failed}` to fill them in",
            err=True,
        )
    _report_failed_profiles(directory, failed_profiles)


@subreddits_app.command("profile")
def profile_command(
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            "-n",
            min=1,
            help="Profile the N biggest communities (default: all, up to 1,000).",
        ),
    ] = None,
    failed: Annotated[
        bool,
        typer.Option("--failed", help="Only those whose last profile failed."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """(Re)build the profiles of the directory's biggest communities from their newest posts,
    without fetching the directory again. One request per community; Arctic Shift sustains
    about 0.8 requests a second, so the default (1,000) takes about 20 minutes."""
    from crowdsift.sources.reddit.directory import (
        PROFILE_LIMIT,
        describe,
        directory_path,
        profile_targets,
    )

    settings = get_settings()
    path = directory_path(settings)
    with exit_codes():
        directory = _directory(path)
    if failed:
        names = [e.display_name for n in directory.failed_profiles if (e := directory.get(n))]
        names = names[:limit] if limit is not None else names
    else:
        names = profile_targets(directory, PROFILE_LIMIT if limit is None else limit)
    directory, failed_profiles = _profile(directory, names, path, settings)
    if as_json:
        typer.echo(json.dumps({"path": str(path), **describe(directory, utc_now())}, indent=2))
    else:
        typer.echo(_profiled_line(len(names), failed_profiles) + f" in {path}")
    _report_failed_profiles(directory, failed_profiles)
    if failed_profiles:
        raise typer.Exit(1)


@subreddits_app.command("search")
def search_command(
    question: Annotated[str, typer.Argument(help="A question, in plain words.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100)] = 8,
    as_json: JsonOption = False,
) -> None:
    """The subreddits closest to a question, with the parts of their scores."""
    from crowdsift.sources.reddit.directory import directory_path
    from crowdsift.sources.reddit.directory_match import (
        W_MEANING,
        W_NAME,
        W_SIZE,
        W_WORDS,
        closest,
        directory_vectors,
    )

    settings = get_settings()
    path = directory_path(settings)
    with exit_codes():
        text = check_question(question)
        directory = _directory(path)
        if directory.is_stale(utc_now()):
            typer.echo(f"warning: {_age(directory)}; {_UPDATE}", err=True)
        embedder = _embedder(settings)
        directory_vectors(directory, embedder, cache_dir=path.parent, on_embed=_embed_note)
        matches = closest(text, directory, embedder, limit=limit, cache_dir=path.parent)
    if as_json:
        payload = {
            "question": text,
            "directory": str(path),
            "fetched_at": directory.fetched_at.isoformat(),
            "weights": {"meaning": W_MEANING, "words": W_WORDS, "name": W_NAME, "size": W_SIZE},
            "matches": [m.model_dump(mode="json") for m in matches],
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    typer.echo("score  meaning  words  name  size  subreddit")
    for match in matches:
        typer.echo(_match_line(match))
    if not matches:
        typer.echo("no SFW subreddit in the directory")


@subreddits_app.command("stats")
def stats_command(as_json: JsonOption = False) -> None:
    """How many subreddits the directory holds, from where, and how old it is."""
    from crowdsift.sources.reddit.directory import MIN_SUBSCRIBERS, describe, directory_path

    path = directory_path(get_settings())
    with exit_codes():
        directory = _directory(path)
    summary = describe(directory, utc_now())
    if as_json:
        typer.echo(json.dumps({"path": str(path), **summary}, indent=2))
        return
    counts = directory.counts
    typer.echo(f"{path}: {_subreddits(len(directory))} from {directory.source}, {_age(directory)}")
    typer.echo(f"prefixes: {''.join(directory.prefixes) or '-'}")
    typer.echo(
        f"last update read {counts.records:,} records: {counts.skipped:,} unusable, "
        f"{counts.over18:,} over 18, {counts.small:,} under {MIN_SUBSCRIBERS:,} subscribers, "
        f"{counts.duplicates:,} duplicates"
    )
    for prefix, reason in directory.failed_prefixes.items():
        typer.echo(f"failed prefix {prefix!r}: {reason}")
    typer.echo(
        f"profiled: {summary['profiled']:,} ({summary['profiled_without_posts']:,} without "
        f"recent posts); last profile failed for {len(directory.failed_profiles):,}"
    )
    if summary["stale"]:
        typer.echo(f"stale: {_UPDATE}")


_UPDATE = "run `crowdsift subreddits update` to refresh it"


def _prefixes(value: str | None) -> list[str]:
    """``--prefixes abc`` → ["a", "b", "c"]; a character no subreddit starts with is an error."""
    from crowdsift.sources.reddit.directory import DEFAULT_PREFIXES

    if value is None:
        return list(DEFAULT_PREFIXES)
    chosen = list(dict.fromkeys(value.lower().replace(",", "").replace(" ", "")))
    bad = sorted(set(chosen) - _PREFIX_CHARS)
    if not chosen or bad:
        raise UsageError(
            f"--prefixes {value!r}: give first characters of subreddit names, letters a-z and "
            f"digits 0-9 (e.g. --prefixes abc){f'; not {bad}' if bad else ''}"
        )
    return chosen


def _previous(path: Path) -> SubredditDirectory | None:
    """The directory an update adds to; a damaged one is rebuilt, with a warning."""
    from crowdsift.sources.reddit.directory import SubredditDirectory, SubredditDirectoryError

    try:
        return SubredditDirectory.load(path)
    except SubredditDirectoryError as exc:
        typer.echo(f"warning: {exc}; building a new one", err=True)
        return None


def _directory(path: Path) -> SubredditDirectory:
    from crowdsift.sources.reddit.directory import SubredditDirectory, SubredditDirectoryError

    directory = SubredditDirectory.load(path)
    if directory is None:
        raise SubredditDirectoryError(
            f"no subreddit directory at {path}: run `crowdsift subreddits update` to build it "
            "(keyless, from Arctic Shift; `--prefixes abc` for a quick start)"
        )
    return directory


def _profile(
    directory: SubredditDirectory, names: list[str], path: Path, settings: Settings
) -> tuple[SubredditDirectory, list[str]]:
    """``directory`` with ``names`` profiled, saved every ``SAVE_EVERY`` and at the end, and
    the names whose fetch failed now. A progress line every ``PROGRESS_EVERY`` on stderr."""
    from crowdsift.sources.reddit.directory import profile_directory
    from crowdsift.sources.reddit.directory_fetch import recent_fetch

    if not names:
        return directory, []
    total = len(names)
    failed: list[str] = []
    with recent_fetch(settings) as fetch_recent:
        for start in range(0, total, SAVE_EVERY):
            chunk = names[start : start + SAVE_EVERY]

            def on_progress(
                done: int, _: int, name: str, failures: int, start: int = start
            ) -> None:
                at = start + done
                if at % PROGRESS_EVERY == 0 or at == total:
                    typer.echo(
                        f"profiles: {at:,}/{total:,} (r/{name}), {len(failed) + failures:,} failed",
                        err=True,
                    )

            directory = profile_directory(
                directory, fetch_recent, names=chunk, progress=on_progress
            )
            failed.extend(n for n in chunk if n.lower() in directory.failed_profiles)
            with exit_codes():
                directory.save(path)
    return directory, failed


def _profiled_line(asked: int, failed: list[str]) -> str:
    done = asked - len(failed)
    return f"profiled {done:,} of {_subreddits(asked)} from their recent posts" + (
        f" ({len(failed):,} failed)" if failed else ""
    )


def _report_failed_profiles(directory: SubredditDirectory, failed: list[str]) -> None:
    if not failed:
        return
    for name in failed[:SHOWN_FAILURES]:
        error(f"profile of r/{name} failed: {directory.failed_profiles.get(name.lower(), '?')}")
    more = len(failed) - SHOWN_FAILURES
    typer.echo(
        (f"…and {more:,} more. " if more > 0 else "")
        + f"{len(failed):,} profile{'s' if len(failed) > 1 else ''} failed; they keep their "
        "last profile. Run `crowdsift subreddits profile --failed` to try them again",
        err=True,
    )


def _embedder(settings: Settings) -> Embedder:
    """The local engine's model (CROWDSIFT_EMBEDDING_MODEL / _RUNTIME)."""
    from crowdsift.engines.embedding import MiniLMEmbedder

    return MiniLMEmbedder.from_settings(settings)


def _embed_note(count: int) -> None:
    typer.echo(
        f"embedding {count:,} subreddit descriptions once (about {count / 300:.0f} s on 2 "
        "cores); later searches reuse them",
        err=True,
    )


def _subreddits(count: int) -> str:
    return f"{count:,} subreddit{'' if count == 1 else 's'}"


def _age(directory: SubredditDirectory) -> str:
    days = directory.age(utc_now()).days
    when = directory.fetched_at.date().isoformat()
    return f"fetched {when} ({days} day{'' if days == 1 else 's'} ago)"


def _match_line(match: SubredditMatch) -> str:
    info = match.info
    about = f": {info.title}" if info.title else ""
    posts = f", {info.profile_posts} recent posts" if info.profiled else ""
    return (
        f"{match.score:5.3f}  {match.meaning:7.3f}  {match.words:5.3f}  {match.name:4.2f}  "
        f"{match.size:4.2f}  r/{info.display_name} ({info.subscribers:,}{posts}){about}"
    )
