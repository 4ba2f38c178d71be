"""Hand-written text pools for the crowdsift demo archive (sample data, not real Reddit content).

``THEMES`` feeds ordinary threads; ``specials`` and ``guides`` hold hand-placed posts that
exercise the filters. ``scripts/build_demo_data.py`` turns all of it into dump files.
"""

from __future__ import annotations

from demo_content import ai_coding, orchestration, power_tools, recorders
from demo_content.model import Theme

THEMES: tuple[Theme, ...] = (
    power_tools.THEME,
    ai_coding.THEME,
    recorders.THEME,
    orchestration.THEME,
)
