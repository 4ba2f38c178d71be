"""Puts the repository root on ``sys.path`` when imported, so a benchmark can import
``tests.support`` (the local protocol servers, which stay out of the installed package).

``python bench/x.py`` and ``python bench/run.py`` put only ``bench/`` on ``sys.path``; a
benchmark that needs ``tests.support`` imports this module first (``import repo_root``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
