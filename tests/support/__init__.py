"""Test support that stays out of the installed package: real local servers that speak the
protocols crowdsift talks, with seeded faults and hostile content.

- ``local_http``: ``LocalHTTPServer`` (a threaded server on 127.0.0.1) and ``Reply``, what the
  protocol servers below are built on; ``net``: free ports, readiness, uvicorn in a thread.
- ``reddit_server`` (with ``reddit_listings``, the listing JSON it serves),
  ``arctic_shift_server`` (with ``arctic_shift_query``, its query language),
  ``youtube_server``, ``amazon_server``, ``openai_server``: one server per API.
- ``chaos``: seeded fault injection for the Reddit and Arctic Shift servers.
- ``injection`` and ``hijacked_model``: prompt-injection payloads and a model that obeys them.
- ``corpus``: a deterministic Reddit corpus to load into the servers.

Tests import it as ``tests.support.<module>`` (pytest puts the repository root on
``sys.path``: ``pythonpath`` in pyproject.toml); the bench and fuzz scripts put the root on
``sys.path`` themselves. What a user's own tests need ships in ``crowdsift.testing``.
"""
