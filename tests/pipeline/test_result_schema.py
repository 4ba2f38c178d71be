"""``ResearchResult``'s JSON schema is a contract other programs read (``crowdsift schema
ResearchResult``): seed 004's ``SummarizeResult`` and the staff-engineer sections are in it.

``research_result.schema.json`` is that schema as published; a change to any model in it fails
here until the snapshot is written again on purpose (``crowdsift schema ResearchResult >
tests/pipeline/research_result.schema.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

from crowdsift.pipeline.result import ResearchResult

SNAPSHOT = Path(__file__).with_name("research_result.schema.json")


def test_the_published_schema_is_the_snapshot_byte_for_byte() -> None:
    published = json.dumps(ResearchResult.model_json_schema(), indent=2) + "\n"
    assert published == SNAPSHOT.read_text("utf-8")
