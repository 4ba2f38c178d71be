"""Fakes and builders for your own tests of code built on crowdsift: no network, no database.

- ``memory_source.MemorySource``: an in-memory ``RedditSource``. ``posts[(subreddit, term)]``
  is served in pages, ``comments[post_id]`` as flat comments or as a tree; ``unavailable`` and
  ``failing_comments`` script failures; every call is recorded in ``calls``.
- ``expert_store.MemoryExpertStore``: an in-memory ``ExpertStore`` with the real store's
  filtering and ordering, for the Experts Panel's phases.
- ``factories``: ``raw_post`` / ``raw_comment`` build the raw dicts Reddit's API returns
  (defaults pass every veto; pass only the fields a test is about) and ``make_post`` builds a
  valid ``Post`` with fixed times (``BASE_TIME``).
- ``clock.Sleeps``: a monotonic clock whose ``sleep`` moves time instead of waiting, for code
  that takes ``sleep``/``clock`` (retries, rate limits).

The scripted engine (``crowdsift.engines.scripted.ScriptedEngine``) and the fast fake embedder
(``crowdsift.engines.embedding.HashingEmbedder``) live beside the real ones. The local
protocol servers, fault injection and prompt-injection fixtures crowdsift's own tests use are
not installed: they live in the repository's ``tests/support``.
"""
