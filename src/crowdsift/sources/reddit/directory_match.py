"""Which subreddits of the directory suit a question: by meaning, by its words, by the names it
says, by size.

``closest`` scores every SFW entry of a ``SubredditDirectory`` for a question (pure, apart from
the vector cache); the score is the sum of four weighted parts, each 0-1:

- *meaning* (``W_MEANING`` 1.0): cosine between the question and ``entry_text``:
  ``"r/{display_name}: {title}. {description}"`` and, for a profiled entry, ``"Recent
  threads: …"`` with its ``EMBED_TITLES`` best recent titles, clipped to 0-1. It finds a
  community whose description or threads are about the question though no word is shared;
  the titles tell MiniLM what members talk about, which a description rarely says.
- *words* (``W_WORDS`` 0.5): BM25 (``BM25_K1`` 1.2, ``BM25_B`` 0.75, IDF over the
  directory's entries) of the question's words (``community_posts.profile_words``) over each
  entry's profile text (``profile_bag``: title, description, and per word the recent posts
  using it), divided by the best entry's. A product or term the members write ("GLM",
  "VRAM", "Orbi") is what a description never says and what MiniLM knows least; IDF makes a
  word few communities use count and one every community uses count little. A description
  alone is a dozen words and a profile hundreds, so each length is compared with the average
  of its kind (``WordIndex``). Half of meaning, because the best entry always scores 1
  however weak its match: above meaning, one shared word would outvote what the whole
  question means. Checked on the titles of 389 threads held out from the profiles of ten
  communities (an Arctic Shift emulator listing 289): among profiled communities only, the
  thread's own community came first for 55/54/53/52% with 0.25/0.5/0.75/1.0 (top 3: 81% for
  each; meaning alone 47%, 76%); with the 279 holding no posts competing too, 46/51/55/54%
  (top 3: 79/81/82/81%). 0.5 is a point from the best top 3 in both settings and between
  their best weights for first place (0.25 and 0.75).
- *name* (``W_NAME`` 0.5): the question names the community. ``NAME_NAMED`` (1.0) for an
  ``r/name`` mention, two to four adjacent words joined ("Home Assistant" → homeassistant,
  "Local LLaMA" → localllama), or a product-like word ("vLLM", "iPhone", "rtx4090", "Plaud"
  mid-sentence); ``NAME_PLAIN`` (0.2) for an ordinary word ("espresso"). Names compare
  case-insensitively, without underscores, singular or plural; stop words and words under 3
  characters never match. A community the question names is nearly always the place to ask,
  and names are what the embedder knows least ("vLLM"), so the full bonus (0.5) outweighs
  the meaning gap between on-topic neighbours (MiniLM cosines of relevant descriptions
  differ by 0.05-0.3). An ordinary word is weak evidence, mostly held by the meaning
  already, and it misfires (r/work for "work laptop keeps overheating"), so it gets 0.1: a
  nudge among communities already close in meaning.
- *size* (``W_SIZE`` 0.05): log10 subscribers, scaled 0-1 between the directory's smallest
  and biggest entry. A tie-breaker toward communities with discussion, never more: 0.05 is
  below the usual gap between a relevant and an irrelevant description.

Over-18 entries never match. An entry whose profile read no posts (the source holds no recent
thread there, so searching it finds nothing) loses ``EMPTY_PENALTY`` (0.25, half the words
weight, about the meaning gap between an on-topic and an off-topic description): it still
matches when the question names it or nothing else is close, but a community with threads
comes first. An entry never profiled is not penalised (it may only be beyond
``PROFILE_LIMIT``).

Embedding the directory is the cost (8-11 s for 3,000 entries of 150-230 characters with
MiniLM on ONNX Runtime, 2 cores; a profiled entry's text is about three times as long), so
``directory_vectors`` embeds once per directory and embedder: kept in memory per process and,
with ``cache_dir``, on disk as ``subreddit-vectors-<key>.npy`` (float16) next to the
directory, the key a hash of the embedder's identity (else name), the text format and the
entries' texts; an older file is removed when a new one is written. The disk vector cache
(``engines.vector_cache``) is not used: at 20,000 rows it would evict everything else for
one directory. The BM25 index (``word_index``; 0.6 s for 25,000 entries) is kept in memory
the same way.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from crowdsift.core.log import get_logger
from crowdsift.core.words import STOPWORDS, looks_like_name
from crowdsift.engines.embedding import Embedder
from crowdsift.sources.reddit.community_posts import profile_words
from crowdsift.sources.reddit.directory import SubredditDirectory, SubredditInfo

log = get_logger(__name__)

Vectors = npt.NDArray[np.float32]

W_MEANING = 1.0
W_WORDS = 0.5
W_NAME = 0.5
W_SIZE = 0.05
EMPTY_PENALTY = 0.25
BM25_K1 = 1.2
BM25_B = 0.75
NAME_NAMED = 1.0
NAME_PLAIN = 0.2
MAX_JOINED_WORDS = 4
"""Up to four adjacent words form a name: "Buy It For Life" → buyitforlife."""
EMBED_DESCRIPTION_CHARS = 300
"""What of a description is embedded: its opening says what the community is about; the
rest is usually rules and links, and every token costs time on thousands of entries."""
EMBED_TITLES = 8
"""Recent titles embedded with the description (the best-scored first): enough to show what
members talk about, few enough that with titles of a usual length (~65 characters) the text
stays within MiniLM's 256 tokens (a longer one loses its last titles to the model's cut).
On held-out threads, 8 and 12 ranked alike, 4 and none worse."""
TEXT_FORMAT = 2
"""Bump when ``entry_text`` changes, so vectors of the old texts are not reused."""


_MEMORY: OrderedDict[str, Vectors] = OrderedDict()
_MEMORY_SIZE = 2
"""Directories whose vectors and word index a process keeps (the last used)."""
_MEMORY_LOCK = threading.Lock()


class SubredditMatch(BaseModel):
    """A community for a question, with the parts of its score (each 0-1, before weights)."""

    info: SubredditInfo
    score: float
    meaning: float
    words: float
    name: float
    size: float


def closest(
    question: str,
    directory: SubredditDirectory,
    embedder: Embedder,
    *,
    limit: int = 8,
    cache_dir: Path | None = None,
) -> list[SubredditMatch]:
    """The ``limit`` SFW communities best for ``question``, best first (see the module doc)."""
    if limit <= 0 or not question.strip() or not directory.entries:
        return []
    matrix = directory_vectors(directory, embedder, cache_dir=cache_dir)
    query = embedder.embed([question])[0].astype(np.float32)
    meaning = np.clip(matrix @ query, 0.0, 1.0)
    adult = np.array([entry.over18 for entry in directory.entries], dtype=bool)
    words = word_scores(question, directory)
    words[adult] = 0.0
    if (best := float(words.max())) > 0:
        words /= best
    names = name_scores(question, directory)
    size = size_prior(directory)
    empty = np.array([e.profiled and e.profile_posts == 0 for e in directory.entries], dtype=bool)
    total = W_MEANING * meaning + W_WORDS * words + W_NAME * names + W_SIZE * size
    total -= EMPTY_PENALTY * empty
    total[adult] = -np.inf
    order = np.argsort(-total, kind="stable")[:limit]
    return [
        SubredditMatch(
            info=directory.entries[i],
            score=round(float(total[i]), 4),
            meaning=round(float(meaning[i]), 4),
            words=round(float(words[i]), 4),
            name=float(names[i]),
            size=round(float(size[i]), 4),
        )
        for i in order
        if np.isfinite(total[i])
    ]


def entry_text(info: SubredditInfo) -> str:
    """What is embedded for an entry: ``"r/{display_name}: {title}. {description}"``, and for
    a profiled one ``" Recent threads: {title} | {title} …"`` (its best ``EMBED_TITLES``)."""
    about = ". ".join(p for p in (info.title, info.description[:EMBED_DESCRIPTION_CHARS]) if p)
    text = f"r/{info.display_name}: {about}" if about else f"r/{info.display_name}"
    if info.recent_titles:
        text += " Recent threads: " + " | ".join(info.recent_titles[:EMBED_TITLES])
    return text


def size_prior(directory: SubredditDirectory) -> npt.NDArray[np.float64]:
    """log10 subscribers scaled to 0-1 between the directory's smallest and biggest entry."""
    logs = np.log10(np.maximum([e.subscribers for e in directory.entries], 1).astype(np.float64))
    if logs.size == 0 or float(logs.max() - logs.min()) == 0.0:
        return np.zeros(logs.size)
    return np.asarray((logs - logs.min()) / (logs.max() - logs.min()), dtype=np.float64)


# --- words -----------------------------------------------------------------------------------


def profile_bag(info: SubredditInfo) -> Counter[str]:
    """An entry's profile text as word → count: its title and description, plus per word the
    recent posts using it (counted in the kept titles, or ``recent_terms`` over every post
    read, the larger: the kept titles are among those posts, so the two are not added)."""
    bag = Counter(profile_words(f"{info.title} {info.description}"))
    titles = Counter[str]()
    for title in info.recent_titles:
        titles.update(set(profile_words(title)))
    for word in titles.keys() | info.recent_terms.keys():
        bag[word] += max(titles[word], info.recent_terms.get(word, 0))
    return bag


@dataclass(frozen=True)
class WordIndex:
    """BM25's view of a directory: per word, the entries using it and how often, and each
    entry's length relative to entries of its kind.

    Two kinds of text share a directory: a description alone (a dozen words) and a profile
    with recent titles (hundreds). Against one average length, every profile would count as
    long and a word said once in a short description would outweigh the same word in many of
    a community's titles; so a length is compared with the average of its kind."""

    postings: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]]
    relative: npt.NDArray[np.float64]
    """Each entry's length over the average length of its kind (1.0 when empty)."""

    @classmethod
    def build(cls, directory: SubredditDirectory) -> WordIndex:
        rows: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.zeros(len(directory.entries))
        profiled = np.array([bool(e.recent_titles or e.recent_terms) for e in directory.entries])
        for position, entry in enumerate(directory.entries):
            bag = profile_bag(entry)
            lengths[position] = sum(bag.values())
            for word, count in bag.items():
                where, counts = rows.setdefault(word, ([], []))
                where.append(position)
                counts.append(count)
        postings = {
            word: (np.array(where, dtype=np.intp), np.array(counts, dtype=np.float64))
            for word, (where, counts) in rows.items()
        }
        relative = np.ones(lengths.size)
        for kind in (profiled, ~profiled):
            if kind.any() and (average := float(lengths[kind].mean())) > 0:
                relative[kind] = lengths[kind] / average
        return cls(postings=postings, relative=relative)

    def scores(self, words: set[str]) -> npt.NDArray[np.float64]:
        """BM25 of ``words`` (each once) for every entry."""
        total = np.zeros(self.relative.size)
        if not self.relative.size:
            return total
        norm = BM25_K1 * (1 - BM25_B + BM25_B * self.relative)
        for word in words:
            found = self.postings.get(word)
            if found is None:
                continue
            where, counts = found
            idf = math.log(1 + (self.relative.size - where.size + 0.5) / (where.size + 0.5))
            total[where] += idf * counts * (BM25_K1 + 1) / (counts + norm[where])
        return total


_WORD_INDEXES: OrderedDict[str, WordIndex] = OrderedDict()


def word_index(directory: SubredditDirectory) -> WordIndex:
    """The directory's ``WordIndex``, built once per process (the last two kept)."""
    key = directory.content_hash
    with _MEMORY_LOCK:
        found = _WORD_INDEXES.get(key)
    if found is None:
        found = WordIndex.build(directory)
    with _MEMORY_LOCK:
        _WORD_INDEXES[key] = found
        _WORD_INDEXES.move_to_end(key)
        while len(_WORD_INDEXES) > _MEMORY_SIZE:
            _WORD_INDEXES.popitem(last=False)
    return found


def word_scores(question: str, directory: SubredditDirectory) -> npt.NDArray[np.float64]:
    """Per entry, BM25 of the question's words over its profile text (not yet scaled)."""
    words = set(profile_words(question))
    if not words or not directory.entries:
        return np.zeros(len(directory.entries))
    return word_index(directory).scores(words)


# --- names -----------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
_MENTION = re.compile(r"(?<![\w/])/?r/([A-Za-z0-9_]{2,21})\b")
_JOIN_GAP = re.compile(r"\s+|[-._]")
"""What may stand between the words of one name: blanks, or one hyphen, dot or underscore."""
_SENTENCE_END = re.compile(r"[.!?]\s*$")
_INNER_GAPS = frozenset(".-_")
"""Inside one written name ("llama.cpp", "wh-1000xm5"): the parts after the first qualify it
and never stand for a community alone; the whole, joined, still does."""


def name_keys(question: str) -> dict[str, float]:
    """Names the question could mean, compact (lower case, no separators) → strength.

    A word counts alone unless it follows a dot, hyphen or underscore. Joined words count
    unless they begin or end with a stop word ("how to" is no r/howto), except when every word
    is capitalised, as names are written ("Buy It For Life")."""
    keys: dict[str, float] = {}

    def add(key: str, strength: float) -> None:
        keys[key] = max(keys.get(key, 0.0), strength)

    for mention in _MENTION.finditer(question):
        add(mention.group(1).lower().replace("_", ""), NAME_NAMED)
    words = list(_WORD.finditer(question))
    for index, word in enumerate(words):
        lowered = word.group().lower()
        gap = question[words[index - 1].end() : word.start()] if index else " "
        if _matchable(lowered) and gap not in _INNER_GAPS:  # "cpp" of "llama.cpp" is no name
            starts = (
                _SENTENCE_END.search(question[: word.start()])
                or not question[: word.start()].strip()
            )
            named = looks_like_name(word.group(), mid_sentence=not starts)
            add(lowered, NAME_NAMED if named else NAME_PLAIN)
        for size in range(2, MAX_JOINED_WORDS + 1):
            group = words[index : index + size]
            if len(group) < size or not _adjacent(question, group):
                break
            parts = [w.group().lower() for w in group]
            capitalised = all(w.group()[:1].isupper() for w in group)
            if capitalised or (parts[0] not in STOPWORDS and parts[-1] not in STOPWORDS):
                add("".join(parts), NAME_NAMED)
    return keys


def name_scores(question: str, directory: SubredditDirectory) -> npt.NDArray[np.float64]:
    """Per entry, how strongly the question names it (0 when it does not)."""
    scores = np.zeros(len(directory.entries))
    index = directory.compact_index
    for key, strength in name_keys(question).items():
        for variant in _plural_variants(key):
            for position in index.get(variant, ()):
                scores[position] = max(scores[position], strength)
    return scores


def _matchable(word: str) -> bool:
    return len(word) >= 3 and word not in STOPWORDS and not word.isdigit()


def _adjacent(question: str, group: list[re.Match[str]]) -> bool:
    return all(_JOIN_GAP.fullmatch(question[a.end() : b.start()]) for a, b in pairwise(group))


def _plural_variants(key: str) -> Iterator[str]:
    yield key
    yield key + "s"
    if key.endswith("s") and _matchable(key[:-1]):
        yield key[:-1]


# --- vectors ---------------------------------------------------------------------------------

VECTOR_FILE_PREFIX = "subreddit-vectors-"


def vectors_key(directory: SubredditDirectory, embedder: Embedder) -> str:
    """Which vectors these are: the embedder's identity (else its name) and the texts embedded
    (a new profile whose embedded titles are the same keeps its vectors)."""
    identity = getattr(embedder, "identity", None)
    model = identity if isinstance(identity, str) else embedder.name
    digest = hashlib.sha256(f"{model}\0{TEXT_FORMAT}".encode("utf-8", "surrogatepass"))
    for entry in directory.entries:
        digest.update(b"\0" + entry_text(entry).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def directory_vectors(
    directory: SubredditDirectory,
    embedder: Embedder,
    *,
    cache_dir: Path | None = None,
    on_embed: Callable[[int], None] | None = None,
) -> Vectors:
    """One row per entry: from memory, else ``cache_dir``, else embedded (``on_embed(n)``
    is told first, since that takes a while) and kept in both."""
    key = vectors_key(directory, embedder)
    with _MEMORY_LOCK:
        found = _MEMORY.get(key)
    if found is None and cache_dir is not None:
        found = _read_vectors(cache_dir / f"{VECTOR_FILE_PREFIX}{key}.npy", len(directory))
    if found is None:
        if on_embed is not None:
            on_embed(len(directory))
        texts = [entry_text(entry) for entry in directory.entries]
        found = np.asarray(embedder.embed(texts), dtype=np.float32)
        if cache_dir is not None:
            _write_vectors(cache_dir, key, found)
    with _MEMORY_LOCK:
        _MEMORY[key] = found
        _MEMORY.move_to_end(key)
        while len(_MEMORY) > _MEMORY_SIZE:
            _MEMORY.popitem(last=False)
    return found


def _read_vectors(path: Path, rows: int) -> Vectors | None:
    try:
        matrix = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("subreddit_vectors_unreadable", path=str(path), error=str(exc))
        return None
    if matrix.ndim != 2 or matrix.shape[0] != rows:
        log.warning("subreddit_vectors_mismatch", path=str(path), shape=list(matrix.shape))
        return None
    return np.asarray(matrix, dtype=np.float32)


def _write_vectors(cache_dir: Path, key: str, matrix: Vectors) -> None:
    """Store as float16 (half the disk; cosines move by ~1e-3) and drop older files."""
    path = cache_dir / f"{VECTOR_FILE_PREFIX}{key}.npy"
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                np.save(handle, matrix.astype(np.float16), allow_pickle=False)
            Path(tmp).replace(path)
        finally:
            Path(tmp).unlink(missing_ok=True)
        for old in cache_dir.glob(f"{VECTOR_FILE_PREFIX}*.npy"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("subreddit_vectors_not_saved", path=str(path), error=str(exc))
