"""Property tests of every parser (issue 9): only typed errors come out, bad records are counted.

The tests import two sibling helper modules by plain name: ``strategies`` (this folder: the
Hypothesis strategies and settings) and ``harness`` (``fuzz/``: each parser's minimal context,
shared with the atheris targets). pytest runs with ``--import-mode=importlib``, which puts
no test folder on ``sys.path``, so both folders are added here, before any test module of this
folder is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FUZZ = HERE.parents[1] / "fuzz"

for folder in (FUZZ, HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
