"""The research pipeline: the run (research), its result and wiring; one folder per stage.

fetch (seed 000: search and screen), gate (seed 002), reddit (seed 001 phase 8: formulate, plan,
rerank, drill), synthesis (seed 004), experts (seed 001 phases 1-7)."""
