"""The atheris targets in ``fuzz/`` cannot rot: each runs here, without atheris, over its seed
corpus and a few hundred deterministic mutations of it (bit flips, cuts, splices, and the
tokens that broke parsers before: deep nesting, long numbers, NaN, lone surrogates)."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
TARGETS = sorted(p.stem.removeprefix("fuzz_") for p in FUZZ.glob("fuzz_*.py"))
MUTATIONS = 150
TOKENS = [
    b"[" * 1200,
    b'{"a":' * 400,
    b"9" * 4400,
    b"NaN",
    b"-Infinity",
    b"1e999",
    b'"\\ud800"',
    b"\x00",
    b"\xff\xfe",
    b"null",
    b"[]",
    b"{}",
    b'"t3_"',
]


def test_every_parser_has_a_target_and_a_seed_corpus() -> None:
    expected = {"comment_trees", "dump_lines", "listings", "llm_replies", "plan_files", "telegram"}
    assert set(TARGETS) == expected
    for target in TARGETS:
        seeds = list((FUZZ / "corpus" / target).iterdir())
        assert seeds and all(s.stat().st_size < 16_000 for s in seeds), target


def _mutate(data: bytes, other: bytes, rng: random.Random) -> bytes:
    """One libFuzzer-like mutation (kept from seed 0 so failures reproduce)."""
    data = bytearray(data)
    kind = rng.randrange(6)
    at = rng.randrange(len(data) + 1)
    if kind == 0 and data:  # flip a few bits
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # cut short
        del data[at:]
    elif kind == 2:  # insert a token that broke parsers before
        data[at:at] = rng.choice(TOKENS)
    elif kind == 3:  # delete a chunk
        del data[at : at + rng.randint(1, 64)]
    elif kind == 4:  # splice another seed in
        start = rng.randrange(len(other) + 1)
        data[at:] = other[start:]
    else:  # repeat a chunk
        data[at:at] = data[at : at + rng.randint(1, 32)] * rng.randint(2, 8)
    return bytes(data)


def _inputs(target: str) -> Iterator[bytes]:
    seeds = [p.read_bytes() for p in sorted((FUZZ / "corpus" / target).iterdir())]
    yield from seeds
    rng = random.Random(f"crowdsift-fuzz-{target}")
    for _ in range(MUTATIONS):
        seed, other = rng.choice(seeds), rng.choice(seeds)
        mutated = seed
        for _ in range(rng.randint(1, 3)):
            mutated = _mutate(mutated, other, rng)
        yield mutated


def _target(name: str) -> ModuleType:
    return importlib.import_module(f"fuzz_{name}")


@pytest.mark.parametrize("target", TARGETS)
def test_target_survives_its_corpus_and_mutations(target: str) -> None:
    """TestOneInput raises only on a finding; here there must be none."""
    test_one_input: Callable[[bytes], None] = _target(target).TestOneInput
    for number, data in enumerate(_inputs(target)):
        try:
            test_one_input(data)
        except Exception as exc:  # the report names the input that reproduces it
            path = Path(f"crash-{target}-{number}")
            raise AssertionError(
                f"fuzz_{target} failed on input #{number} ({len(data)} bytes, starts "
                f"{data[:60]!r}); write it to {path} and run: python fuzz/fuzz_{target}.py {path}"
            ) from exc


def test_targets_need_no_atheris_when_imported() -> None:
    """``import atheris`` lives under ``if __name__ == "__main__"``: tests never need it."""
    for target in TARGETS:
        source = (FUZZ / f"fuzz_{target}.py").read_text("utf-8")
        before_main = source.split('if __name__ == "__main__":', 1)[0]
        assert "import atheris" not in before_main, target
