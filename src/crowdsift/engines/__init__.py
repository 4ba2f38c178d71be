"""Engines: one interface for every LLM task, with an OpenAI-compatible, a local and a
scripted implementation. See ``base.py`` for the contract."""
