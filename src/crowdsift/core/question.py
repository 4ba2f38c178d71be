"""How long a question may be: the same bounds for the CLI, the HTTP API, MCP and queued jobs.

Under ``MIN_QUESTION_CHARS`` there is nothing to search for; past ``MAX_QUESTION_CHARS`` the
text is a document, not a question (and every stage would carry it: the formulation prompt,
the gate, the synthesis).
"""

from __future__ import annotations

MIN_QUESTION_CHARS = 3
"""The shortest question worth a search."""
MAX_QUESTION_CHARS = 2000
"""The longest question any front end accepts."""
