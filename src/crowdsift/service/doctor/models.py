"""What ``crowdsift doctor`` reports: one ``Check`` per thing a run depends on.

A check is ``ok`` (works), ``warn`` (degraded, but the default path still works: auto falls
back), ``fail`` (something the default path needs is broken: ``doctor`` exits 1) or
``skipped`` (not configured, and not needed). ``detail`` says what was found, ``fix`` what to
do about it; neither ever holds a secret (``mask_secret`` shows the tail of a key at most).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

CheckStatus = Literal["ok", "warn", "fail", "skipped"]


class Check(BaseModel):
    """One line of ``crowdsift doctor``."""

    name: str = Field(description="what was checked, e.g. 'arctic-shift'")
    status: CheckStatus
    detail: str = Field(description="what was found (paths, sizes, URLs with passwords hidden)")
    fix: str = Field("", description="what to do about it; empty when nothing needs doing")


class DoctorReport(BaseModel):
    """Every check, in a fixed order, and whether the default path works (``ok``)."""

    ok: bool = Field(description="false when any check failed: `crowdsift doctor` exits 1")
    checks: list[Check]

    @classmethod
    def of(cls, checks: list[Check]) -> DoctorReport:
        return cls(ok=all(c.status != "fail" for c in checks), checks=checks)


def mask_secret(value: str | None) -> str:
    """A key as doctor may show it: its last four characters when it is long enough that they
    give nothing away (16+), else stars only; "(not set)" for none."""
    if not value:
        return "(not set)"
    return f"****{value[-4:]}" if len(value) >= 16 else "****"
