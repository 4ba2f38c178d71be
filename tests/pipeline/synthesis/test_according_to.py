"""A sentence that only pointed at a removed citation goes with it: never "According to ()"."""

from __future__ import annotations

from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.grounding import ground
from crowdsift.pipeline.synthesis.models import AnswerDraft, SummarizeRequest


def test_a_sentence_left_pointing_at_nothing_is_dropped(
    recorder_request: SummarizeRequest,
) -> None:
    draft = AnswerDraft(
        summary=(
            "According to [post:zz9fake] this is settled. "
            "The battery lasts about thirty hours. [post:bat1]"
        ),
        highlights=["As [comment:zz8fake] says, it is the best.", "Thirty hours [post:bat1]"],
    )
    grounded = ground(draft, recorder_request, SynthesisConfig(), engine="scripted")
    shown = [text.marked() for text in [grounded.content.summary, *grounded.content.highlights]]
    assert not any("()" in text or "According to" in text for text in shown), shown
    assert "thirty hours" in grounded.content.summary.text
    assert any("zz9fake" in problem for problem in grounded.problems)
