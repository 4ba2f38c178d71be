"""Seed 000: the one search-and-screen engine. A SearchPlan becomes requests, the replies are
screened (veto, clean, score, filter, dedupe) into candidates, and ``crowdsift fetch`` adds their
comments."""
