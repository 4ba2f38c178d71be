"""The one synthesis (seed 004 + seed 001's staff-engineer sections): drilled threads →
selector → prompt → engine → grounding → ``Answer``
(``crowdsift.pipeline.synthesis.answer.synthesize_answer``)."""
