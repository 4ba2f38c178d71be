"""What ``crowdsift ask --experts`` and ``crowdsift experts drift`` do, apart from parsing.

The bundled demo experts are imported on first use when a question names one of them, so
``make demo`` works on a fresh machine; nothing else is ever imported implicitly.
"""

from __future__ import annotations

from collections.abc import Sequence

from crowdsift.core.config import Settings
from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import UnknownExpertError, UsageError
from crowdsift.engines.factory import EngineChoice, build_engine
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.demo import demo_manifest, ensure_demo_experts
from crowdsift.sources.experts.importer import slugify


def parse_expert_ids(value: str) -> list[str]:
    ids = list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    if not ids:
        raise UsageError('--experts needs at least one expert id, e.g. --experts "a,b"')
    return ids


def ensure_requested(store: SqlExpertStore, expert_ids: Sequence[str]) -> None:
    """Import bundled demo experts that are asked for; unknown ids are an UnknownExpertError."""
    missing = [eid for eid in expert_ids if store.get_expert(eid) is None]
    demo_ids = {slugify(entry.channel) for entry in demo_manifest()}
    if any(eid in demo_ids for eid in missing):
        ensure_demo_experts(store)
        missing = [eid for eid in missing if store.get_expert(eid) is None]
    if missing:
        known = sorted({e.expert_id for e in store.experts()} | demo_ids)
        raise UnknownExpertError(missing, known)


async def drift(
    settings: Settings,
    expert_ids: Sequence[str] | None,
    *,
    engine_choice: EngineChoice | None = None,
    config: ExpertsConfig | None = None,
) -> dict[str, int]:
    """Run the offline drift analysis for the given experts (all when None): groups per expert."""
    from crowdsift.pipeline.experts.drift import analyse_drift

    store = SqlExpertStore(settings.resolved_database_url)
    try:
        ids = list(expert_ids) if expert_ids else [e.expert_id for e in store.experts()]
        if expert_ids:
            ensure_requested(store, ids)
        engine = build_engine(settings, engine_choice)
        try:
            found = {}
            for expert_id in ids:
                groups = await analyse_drift(expert_id, store, engine, config or settings.experts)
                found[expert_id] = len(groups)
            return found
        finally:
            await engine.aclose()
    finally:
        store.close()
