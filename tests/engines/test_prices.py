"""Cost accounting: the price table, the cost of each call, and the budget that stops a run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import Settings
from crowdsift.core.errors import BudgetExceededError, ConfigError
from crowdsift.engines.base import EngineReply, OutT, Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.openai_compat import OpenAICompatEngine
from crowdsift.engines.prices import (
    ModelPrice,
    PriceTable,
    bundled_text,
    load_price_table,
    parse_price_table,
    price_table_from_settings,
    priced_call,
)
from crowdsift.engines.scripted import CountingEngine, ScriptedEngine
from crowdsift.pipeline.gate.judge import GateItem, RelevanceTask, RelevanceVerdicts
from tests.support.openai_server import ChatCompletionsServer

TABLE = PriceTable(
    models={
        "gpt-4o": ModelPrice(input=2.5, output=10.0),
        "gpt-4o-mini": ModelPrice(input=0.15, output=0.6),
        "free-local": ModelPrice(input=0, output=0),
    }
)


def _task(n: int = 1) -> RelevanceTask:
    return RelevanceTask("drills", "reddit", (GateItem(title="t", snippet="s"),) * n)


# --- the table ---------------------------------------------------------------------------


def test_lookup_is_exact_then_longest_prefix_then_none() -> None:
    assert TABLE.price_for("gpt-4o") == TABLE.models["gpt-4o"]
    # "gpt-4o-mini-2024-07-18" starts with both "gpt-4o" and "gpt-4o-mini": the longer wins.
    assert TABLE.price_for("gpt-4o-mini-2024-07-18") == TABLE.models["gpt-4o-mini"]
    assert TABLE.price_for("llama3.1:8b") is None
    assert TABLE.price_for(None) is None


def test_cost_is_tokens_times_the_per_million_prices() -> None:
    price = TABLE.models["gpt-4o"]
    expected = (1234 * price.input + 567 * price.output) / 1_000_000
    assert TABLE.cost("gpt-4o", 1234, 567) == pytest.approx(expected)
    assert TABLE.cost("free-local", 10_000, 10_000) == 0
    assert TABLE.cost("unknown", 1, 1) is None


def test_the_bundled_table_parses_and_prices_the_default_models() -> None:
    table = load_price_table(None)
    settings = Settings()
    for phase in ("plan", "filter", "synthesis", "map", "medium_scoring", "comment_groups"):
        assert table.price_for(settings.model_for(phase)) is not None, phase


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("models: [oops", "not valid YAML"),
        ("prices: {}", "needs a 'models:' mapping"),
        ("models:\n  m: {input: -1, output: 2}", "models.m.input"),
        ("models:\n  m: {input: 1}", "models.m.output"),
        ("models:\n  m: {input: 1, output: 2, cached: 3}", "models.m.cached"),
    ],
)
def test_a_bad_table_is_a_config_error_naming_the_file_and_entry(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_price_table(text, "/home/me/prices.yaml")
    assert "/home/me/prices.yaml" in str(caught.value)
    assert says in str(caught.value)


def test_the_table_in_use_is_the_variable_then_the_users_copy_then_the_bundled_one(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path)
    assert price_table_from_settings(settings).origin == "bundled"

    copy = tmp_path / "prices.yaml"
    copy.write_text("models:\n  mine: {input: 1, output: 1}\n")
    assert set(price_table_from_settings(settings).models) == {"mine"}

    chosen = tmp_path / "chosen.yaml"
    chosen.write_text("models:\n  chosen: {input: 3, output: 4}\n")
    named = Settings(home=tmp_path, price_table=chosen)
    assert set(price_table_from_settings(named).models) == {"chosen"}

    missing = Settings(home=tmp_path, price_table=tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="crowdsift prices init"):
        price_table_from_settings(missing)


def test_prices_init_writes_an_editable_copy_that_runs_then_use(tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"CROWDSIFT_HOME": str(tmp_path)}
    first = runner.invoke(app, ["prices", "init"], env=env)
    assert first.exit_code == 0, first.output
    assert (tmp_path / "prices.yaml").read_text() == bundled_text()

    again = runner.invoke(app, ["prices", "init"], env=env)
    assert again.exit_code == 2
    assert "--force" in again.output

    (tmp_path / "prices.yaml").write_text("models:\n  house-model: {input: 7, output: 9}\n")
    shown = runner.invoke(app, ["prices", "show"], env=env)
    assert shown.exit_code == 0
    assert str(tmp_path / "prices.yaml") in shown.output
    assert "house-model" in shown.output and "gpt-4o" not in shown.output


# --- the cost of a call ------------------------------------------------------------------


def test_a_priced_call_records_its_cost_and_an_unpriced_one_names_its_model() -> None:
    priced = priced_call(TABLE, phase="filter", model="gpt-4o", prompt_tokens=1000,
                         completion_tokens=100)  # fmt: skip
    assert priced.cost_usd == TABLE.cost("gpt-4o", 1000, 100)
    [record] = priced.per_call
    assert (record.phase, record.model, record.cost_usd) == ("filter", "gpt-4o", priced.cost_usd)

    unpriced = priced_call(TABLE, phase="map", model="llama3", prompt_tokens=5,
                           completion_tokens=5)  # fmt: skip
    assert unpriced.cost_usd == 0
    assert unpriced.unpriced_models == ["llama3"]
    assert unpriced.per_call[0].cost_usd is None

    total = priced.model_copy(deep=True)
    total.add(unpriced)
    total.add(unpriced)
    assert total.cost_usd == priced.cost_usd
    assert total.unpriced_models == ["llama3"]  # named once, however many calls
    assert [r.model for r in total.per_call] == ["gpt-4o", "llama3", "llama3"]


def test_the_openai_engine_prices_each_completion_from_the_table(
    server: ChatCompletionsServer, make_engine: Callable[..., OpenAICompatEngine]
) -> None:
    server.enqueue("not json at all", json.dumps({"relevant": [True]}))  # one repair round trip
    engine = make_engine(model_filter="gpt-4o-mini")
    engine._prices = TABLE

    async def once() -> EngineReply[RelevanceVerdicts]:
        try:
            return await engine.run(_task())
        finally:
            await engine.aclose()

    reply = asyncio.run(once())

    first, second = reply.usage.per_call
    assert (first.model, second.model) == ("gpt-4o-mini", "gpt-4o-mini")
    for record in (first, second):
        assert record.cost_usd == TABLE.cost(
            "gpt-4o-mini", record.prompt_tokens, record.completion_tokens
        )
        assert record.prompt_tokens > 0 and record.phase == "filter"
    assert reply.usage.cost_usd == pytest.approx(first.cost_usd + second.cost_usd)  # type:
    # ignore[operator]
    assert reply.usage.prompt_tokens == first.prompt_tokens + second.prompt_tokens


def test_local_calls_cost_nothing_and_are_still_listed() -> None:
    reply = asyncio.run(LocalEngine(embedder=HashingEmbedder()).run(_task(2)))
    [record] = reply.usage.per_call
    assert record.cost_usd == 0 and reply.usage.cost_usd == 0
    assert record.phase == "filter" and record.model


# --- the budget --------------------------------------------------------------------------


def test_the_budget_refuses_calls_once_spent_and_says_so() -> None:
    per_call = TABLE.cost("gpt-4o", 10_000, 1_000)
    assert per_call is not None
    inner = ScriptedEngine(
        function=lambda _task: RelevanceVerdicts(relevant=[True]),
        tokens_per_call=(10_000, 1_000),
        model="gpt-4o",
        prices=TABLE,
    )
    engine = CountingEngine(inner, budget_usd=per_call * 2.5)

    for _ in range(3):  # 0, 1, then 2 calls' worth spent: all under the budget
        asyncio.run(engine.run(_task()))
    with pytest.raises(BudgetExceededError) as caught:
        asyncio.run(engine.run(_task()))

    assert len(inner.requests) == 3  # the refused call never reached the engine
    assert engine.usage.budget_exhausted and engine.usage.calls_skipped == 1
    assert engine.usage.cost_usd == pytest.approx(3 * per_call)
    assert "--budget-usd" in str(caught.value) and "filter" in str(caught.value)


class _PricedLocal:
    """The local engine, reporting tokens at gpt-4o-mini prices: a run that costs money."""

    name = "openai"

    def __init__(self) -> None:
        self.inner = LocalEngine(embedder=HashingEmbedder())
        self.calls = 0

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        self.calls += 1
        reply = await self.inner.run(task)
        usage = priced_call(TABLE, phase=task.phase, model="gpt-4o-mini",
                            prompt_tokens=20_000, completion_tokens=2_000)  # fmt: skip
        usage.by_phase = {task.phase: 1}
        return EngineReply(output=reply.output, usage=usage, engine="openai", model="gpt-4o-mini")

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_a_research_run_over_budget_stops_calling_and_returns_a_partial_result(
    tmp_path: Path,
) -> None:
    from crowdsift.pipeline.reddit.profiles import subreddit_profiles
    from crowdsift.pipeline.research import run_research
    from crowdsift.pipeline.result import AskDeps, ResearchResult
    from crowdsift.sources.archive.demo import ensure_demo_archive
    from crowdsift.sources.archive.source import ArchiveSource

    archive = ensure_demo_archive(tmp_path)

    def run(budget: float | None) -> tuple[ResearchResult, int]:
        engine = _PricedLocal()
        with ArchiveSource(archive) as source:
            deps = AskDeps(settings=Settings(), engine=engine, source=source,
                           candidates=subreddit_profiles(archive), budget_usd=budget)  # fmt: skip
            result = asyncio.run(run_research("Is the Plaud Note worth it?", deps)).result
        return result, engine.calls

    free, free_calls = run(None)
    one_call = TABLE.cost("gpt-4o-mini", 20_000, 2_000)
    assert one_call is not None and free_calls >= 3
    assert free.usage.cost_usd == pytest.approx(free_calls * one_call)
    assert not free.usage.budget_exhausted

    capped, capped_calls = run(one_call * 1.5)  # room for two calls, no more

    assert capped_calls < free_calls
    assert capped.usage.budget_exhausted and capped.usage.calls_skipped >= 1
    assert capped.usage.budget_usd == pytest.approx(one_call * 1.5)
    assert capped.status == "partial"
    assert capped.usage.cost_usd == pytest.approx(capped_calls * one_call)
    assert len(capped.usage.per_call) == capped_calls
    again = ResearchResult.model_validate_json(capped.model_dump_json())  # still valid JSON
    assert again.usage.calls_skipped == capped.usage.calls_skipped


def test_ask_refuses_a_budget_that_is_not_positive() -> None:
    result = CliRunner().invoke(app, ["ask", "drills?", "--budget-usd", "0"])
    assert result.exit_code == 2
    assert "--budget-usd must be more than 0" in result.output
