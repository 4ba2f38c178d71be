"""Run every doctor check at once, each on its own clock, none able to stop the others.

Each check runs in a daemon thread with a budget (``CheckSpec.budget``): a check still running
when its budget is spent is reported as ``fail`` ("no answer within N s") and left behind, so
``crowdsift doctor`` never hangs on a dead host or a stuck model load. A check that raises is a
``fail`` with the exception's message, never a crash of the whole report.

``assess`` then judges the source checks together, as ``--source auto`` would use them: when
one source works, another one's failure only means auto falls back (``warn``); when none of
reddit-api, arctic-shift and your archive works, their failures stay ``fail`` (every answer
would come from the sample data). Finally every secret the settings hold is masked in every
line, whatever a server or a library put in its error message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from crowdsift.core.log import REDACTED, redact_text
from crowdsift.service.doctor.context import DoctorContext
from crowdsift.service.doctor.local import check_archive, check_embedding
from crowdsift.service.doctor.models import Check, DoctorReport
from crowdsift.service.doctor.remote import check_arctic_shift, check_llm, check_reddit
from crowdsift.service.doctor.stores import check_chroma, check_database, check_redis

SOURCES = ("reddit-api", "arctic-shift", "archive")
"""The real-data links of ``--source auto``, in its order (the sample comes after them)."""


@dataclass(frozen=True)
class CheckSpec:
    """One check: its name, its function (None from it means "not in use": no line), how
    many seconds it may take, and what to do when it crashes or hangs."""

    name: str
    run: Callable[[DoctorContext], Check | None]
    budget: float
    fix: str


DEFAULT_SPECS: tuple[CheckSpec, ...] = (
    CheckSpec("reddit-api", check_reddit, 10.0, "check REDDIT_AUTH_URL and the network"),
    CheckSpec("arctic-shift", check_arctic_shift, 10.0, "check ARCTIC_SHIFT_BASE_URL"),
    CheckSpec("archive", check_archive, 30.0, "re-import the archive or fix CROWDSIFT_ARCHIVE"),
    CheckSpec("llm", check_llm, 10.0, "check CROWDSIFT_LLM_BASE_URL and CROWDSIFT_LLM_API_KEY"),
    CheckSpec("embedding", check_embedding, 60.0, "run `make install`"),
    CheckSpec("database", check_database, 10.0, "check CROWDSIFT_DATABASE_URL"),
    CheckSpec("redis", check_redis, 10.0, "check CROWDSIFT_CACHE_URL / CROWDSIFT_BROKER_URL"),
    CheckSpec("chroma", check_chroma, 10.0, "check CROWDSIFT_CHROMA_URL"),
)


def run_doctor(
    ctx: DoctorContext,
    specs: Sequence[CheckSpec] = DEFAULT_SPECS,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> DoctorReport:
    """Every check in ``specs`` (concurrently), judged together, secrets masked."""
    slots: list[list[Check | None]] = [[] for _ in specs]
    threads = [
        threading.Thread(
            target=_guarded, args=(spec, ctx, slots[i]), name=f"doctor-{spec.name}", daemon=True
        )
        for i, spec in enumerate(specs)
    ]
    started = clock()
    for thread in threads:
        thread.start()
    checks: list[Check] = []
    for spec, thread, slot in zip(specs, threads, slots, strict=True):
        thread.join(max(0.0, started + spec.budget - clock()))
        if thread.is_alive():
            checks.append(
                Check(
                    name=spec.name,
                    status="fail",
                    detail=f"no answer within {spec.budget:g} s",
                    fix=spec.fix,
                )
            )
        elif slot and slot[0] is not None:
            checks.append(slot[0])
    secrets = ctx.settings.secret_values()
    return DoctorReport.of([_masked(check, secrets) for check in assess(checks)])


def _guarded(spec: CheckSpec, ctx: DoctorContext, slot: list[Check | None]) -> None:
    try:
        slot.append(spec.run(ctx))
    except Exception as exc:  # one broken check must not hide the others
        detail = f"the check itself failed: {type(exc).__name__}: {exc}"
        slot.append(Check(name=spec.name, status="fail", detail=detail, fix=spec.fix))


def assess(checks: Sequence[Check]) -> list[Check]:
    """Source failures are ``warn`` while another source works (auto falls back to it)."""
    working = next((c.name for c in checks if c.name in SOURCES and c.status == "ok"), None)
    if working is None:
        return list(checks)
    return [
        c.model_copy(
            update={"status": "warn", "detail": f"{c.detail}; auto uses {working} instead"}
        )
        if c.name in SOURCES and c.status == "fail"
        else c
        for c in checks
    ]


def default_path(report: DoctorReport) -> str:
    """One line on what a plain ``crowdsift ask`` would use, from the report's checks."""
    by_name = {c.name: c for c in report.checks}
    source = next((n for n in SOURCES if n in by_name and by_name[n].status == "ok"), None)
    llm = by_name.get("llm")
    engine = "openai" if llm is not None and llm.status != "skipped" else "local"
    where = source or "the bundled sample archive (SAMPLE DATA)"
    return f"default path: --source auto answers from {where}, --engine {engine}"


def _masked(check: Check, secrets: Sequence[str]) -> Check:
    def mask(text: str) -> str:
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return redact_text(text)

    return check.model_copy(update={"detail": mask(check.detail), "fix": mask(check.fix)})
