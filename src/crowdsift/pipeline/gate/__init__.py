"""Seed 002: the relevance gate (one batched judgement, one 2x refetch, fail-open) for every source,
and the gated YouTube/Amazon fetches."""
