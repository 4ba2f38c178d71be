"""``crowdsift prices``: see which price table a run uses, and copy it out for editing."""

from __future__ import annotations

from typing import Annotated

import typer

from crowdsift.cli.support import exit_codes
from crowdsift.core.config import get_settings
from crowdsift.core.errors import PlanError
from crowdsift.engines.prices import (
    bundled_text,
    price_table_from_settings,
    price_table_path,
    user_table_path,
)

prices_app = typer.Typer(
    help="The USD price table behind usage.cost_usd and --budget-usd.", no_args_is_help=True
)


@prices_app.command("show")
def show() -> None:
    """Print the table in use (CROWDSIFT_PRICE_TABLE, your copy, or the bundled one)."""
    settings = get_settings()
    with exit_codes():
        table = price_table_from_settings(settings)
        path = price_table_path(settings)
    typer.echo(f"price table: {path or 'bundled'} (USD per 1M tokens)")
    width = max((len(name) for name in table.models), default=5)
    typer.echo(f"  {'model':<{width}}  {'input':>8}  {'output':>8}")
    for name, price in sorted(table.models.items()):
        typer.echo(f"  {name:<{width}}  {price.input:>8.3f}  {price.output:>8.3f}")


@prices_app.command("init")
def init(
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing copy.")] = False,
) -> None:
    """Copy the bundled table to the data directory, where runs pick it up; then edit it."""
    target = user_table_path(get_settings())
    with exit_codes():
        if target.exists() and not force:
            raise PlanError(f"{target} exists; edit it, or pass --force to start over")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(bundled_text(), "utf-8")
    typer.echo(f"wrote {target}; edit the prices there (runs use it unless CROWDSIFT_PRICE_TABLE)")
