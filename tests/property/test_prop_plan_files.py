"""Plan files (``crowdsift fetch --plan``): ``load_plan`` returns a SearchPlan or raises PlanError
(one line, exit code 2), for any bytes; a valid plan survives a write and a read unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_text, dumps, examples, hostile_json_text, mutated

from crowdsift.cli.fetch import load_plan
from crowdsift.core.errors import PlanError
from crowdsift.core.models import SearchPlan

VALID_PLAN = json.loads(
    (Path(__file__).resolve().parents[2] / "examples" / "demo_plan.json").read_text("utf-8")
)
SUBREDDIT_NAMES = st.from_regex(r"[a-z0-9][a-z0-9_]{1,20}", fullmatch=True)


def _load(tmp_path: Path, content: bytes) -> SearchPlan | None:
    path = tmp_path / "plan.json"
    path.write_bytes(content)
    try:
        plan = load_plan(path)
    except PlanError as exc:
        message = str(exc)
        assert f"plan file {path}" in message and "\n" not in message
        return None
    assert plan.search_terms and plan.subreddits
    return plan


PLAN_BYTES = st.one_of(
    st.binary(max_size=80),
    any_text().map(lambda t: t.encode("utf-8", "surrogatepass")),
    hostile_json_text(list(VALID_PLAN)).map(str.encode),
    mutated(VALID_PLAN).map(lambda plan: dumps(plan).encode()),
)


@examples(150)
@given(content=PLAN_BYTES)
def test_any_plan_file_loads_or_raises_plan_error(tmp_path: Path, content: bytes) -> None:
    _load(tmp_path, content)


@examples(60)
@given(
    terms=st.lists(st.text(min_size=1, max_size=20).filter(str.strip), min_size=1, max_size=5),
    subreddits=st.lists(SUBREDDIT_NAMES, min_size=1, max_size=5),
    notes=st.one_of(st.none(), st.text(max_size=30)),
)
def test_a_valid_plan_round_trips_through_its_file(
    tmp_path: Path, terms: list[str], subreddits: list[str], notes: str | None
) -> None:
    plan = SearchPlan(search_terms=terms, subreddits=subreddits, notes=notes)
    loaded = _load(tmp_path, plan.model_dump_json().encode("utf-8", "surrogatepass"))
    assert loaded == plan


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 100_000,
        b'{"search_terms": ' + b"[" * 990 + b"]" * 990 + b"}",
        b'{"search_terms": ["a"], "subreddits": ["gadgets"], "x": ' + b"9" * 5000 + b"}",
        b"\xff\xfe{}",
    ],
    ids=["deep", "deep-just-under-the-limit", "number-past-digit-limit", "not-utf-8"],
)
def test_hostile_plan_files_are_plan_errors(tmp_path: Path, content: bytes) -> None:
    assert _load(tmp_path, content) is None


def test_the_example_plans_load(tmp_path: Path) -> None:
    examples_dir = Path(__file__).resolve().parents[2] / "examples"
    for path in sorted(examples_dir.glob("*plan*.json")):
        plan: Any = _load(tmp_path, path.read_bytes())
        assert plan is not None, path
