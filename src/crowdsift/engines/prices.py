"""Model prices: what a call cost, from a table users can edit.

The table is YAML: ``models: {name: {input: usd_per_1m, output: usd_per_1m}}``. The one used is
``CROWDSIFT_PRICE_TABLE``, else ``prices.yaml`` in the data directory (``crowdsift prices init``
copies the bundled table there for editing), else the bundled ``prices.yaml`` beside this
module. Lookup is exact, then the longest listed prefix, so dated snapshots
(``gpt-4o-mini-2024-07-18``) find their family. A model that is not listed has no price: the
caller reports it as unpriced instead of inventing a number.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crowdsift.core.config import Settings
from crowdsift.core.errors import ConfigError
from crowdsift.engines.base import CallUsage, Usage

BUNDLED_NAME = "prices.yaml"


class ModelPrice(BaseModel):
    """USD per one million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class PriceTable(BaseModel):
    """Prices per model name, and where they came from (for messages)."""

    model_config = ConfigDict(frozen=True)

    models: dict[str, ModelPrice] = Field(default_factory=dict)
    origin: str = "bundled"

    def price_for(self, model: str | None) -> ModelPrice | None:
        """The price of ``model``: exact name, else the longest listed prefix, else None."""
        if not model:
            return None
        if model in self.models:
            return self.models[model]
        prefixes = [name for name in self.models if model.startswith(name)]
        return self.models[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str | None, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD for one call, or None when the model has no price."""
        price = self.price_for(model)
        if price is None:
            return None
        usd = (prompt_tokens * price.input + completion_tokens * price.output) / 1_000_000
        return round(usd, 8)


def bundled_text() -> str:
    """The bundled table's text, comments included (what ``prices init`` writes)."""
    return (resources.files("crowdsift.engines") / BUNDLED_NAME).read_text("utf-8")


def parse_price_table(text: str, origin: str) -> PriceTable:
    """Validate a price table's YAML; errors name the file and the bad entry."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"the price table {origin} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ConfigError(
            f"the price table {origin} needs a 'models:' mapping of "
            "name: {input: USD per 1M tokens, output: USD per 1M tokens}"
        )
    try:
        return PriceTable(models=data["models"], origin=origin)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"the price table {origin} has a bad entry at models.{where}: {first['msg']} "
            "(each model needs non-negative 'input' and 'output' USD per 1M tokens)"
        ) from exc


def load_price_table(path: Path | None) -> PriceTable:
    """The table at ``path``, or the bundled one when ``path`` is None."""
    if path is None:
        return parse_price_table(bundled_text(), "bundled")
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read the price table CROWDSIFT_PRICE_TABLE={path}: {exc.strerror}; "
            "create one with `crowdsift prices init` or unset the variable"
        ) from exc
    return parse_price_table(text, str(path))


def user_table_path(settings: Settings) -> Path:
    """Where ``crowdsift prices init`` writes the editable copy (picked up automatically)."""
    return settings.data_dir / "prices.yaml"


def price_table_path(settings: Settings) -> Path | None:
    """CROWDSIFT_PRICE_TABLE, else the user's copy if it exists, else None (the bundled one)."""
    if settings.price_table is not None:
        return settings.price_table
    user = user_table_path(settings)
    return user if user.is_file() else None


def price_table_from_settings(settings: Settings) -> PriceTable:
    return load_price_table(price_table_path(settings))


def priced_call(
    prices: PriceTable | None,
    *,
    phase: str,
    model: str | None,
    prompt_tokens: int,
    completion_tokens: int,
    latency_ms: float = 0.0,
) -> Usage:
    """The ``Usage`` of one completed call, its cost from ``prices`` (None = no table given).

    Without a table the call is unpriced; with one, an unlisted model is named in
    ``unpriced_models`` so the report says which prices to add.
    """
    table = prices if prices is not None else PriceTable()
    cost = table.cost(model, prompt_tokens, completion_tokens)
    record = CallUsage(
        phase=phase,
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        latency_ms=latency_ms,
        cost_usd=cost,
    )
    return Usage(
        calls=1,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost or 0.0,
        unpriced_models=[model] if cost is None and model else [],
        per_call=[record],
    )
