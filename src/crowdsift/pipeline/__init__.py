"""The research pipeline: the run (research), its result and wiring; one folder per stage.

fetch (seed 000: search and screen), gate (seed 002), reddit (the Reddit branch of seed 001:
formulate, plan, rerank, drill), synthesis (seed 004), experts (the Experts Panel of seed 001)."""
