"""``ResearchResult``'s JSON schema is a contract other programs read (``crowdsift schema
ResearchResult``): seed 004's ``SummarizeResult`` and the staff-engineer sections are in it.

``research_result.schema.json`` is that schema as published; a change to any model in it fails
here until the snapshot is written again on purpose (``crowdsift schema ResearchResult >
tests/pipeline/research_result.schema.json``). What the JSON carries beyond it is only
additive: ``summary.claims``, the answer's texts as spans.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crowdsift.pipeline.result import ResearchResult

SNAPSHOT = Path(__file__).with_name("research_result.schema.json")


def test_the_published_schema_is_the_snapshot_byte_for_byte() -> None:
    published = json.dumps(ResearchResult.model_json_schema(), indent=2) + "\n"
    assert published == SNAPSHOT.read_text("utf-8")


def test_the_json_written_adds_only_the_claims_to_the_published_schema() -> None:
    written: dict[str, Any] = ResearchResult.model_json_schema(mode="serialization")
    defs = written["$defs"]
    assert set(defs) - set(json.loads(SNAPSHOT.read_text("utf-8"))["$defs"]) == {
        "CitedSpan", "Claims"
    }  # fmt: skip
    assert defs["CitedSpan"]["properties"]["cites"]["items"] == {"type": "string"}
    answer = defs["SummarizeResult"]
    assert answer["properties"].pop("claims")["$ref"] == "#/$defs/Claims"
    answer["required"].remove("claims")
    del defs["CitedSpan"], defs["Claims"]
    assert json.dumps(written, indent=2) + "\n" == SNAPSHOT.read_text("utf-8")
