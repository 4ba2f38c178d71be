"""crowdsift's settings tree: the root ``Settings`` and its typed sections, read once.

``settings`` holds the root, ``reddit``, ``experts`` and ``scoring`` the sections it loads
with it, and
``loading`` reads the tree once and words what is wrong with it. Import from here.
"""

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.config.loading import (
    SECTIONS,
    env_name,
    get_settings,
    load_settings,
    settings_error_message,
)
from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.config.scoring import ScoringConfig
from crowdsift.core.config.settings import SearchSort, Settings, SourceName, TimeFilter

__all__ = [
    "SECTIONS",
    "ExpertsConfig",
    "RedditConfig",
    "ScoringConfig",
    "SearchSort",
    "Settings",
    "SourceName",
    "TimeFilter",
    "env_name",
    "get_settings",
    "load_settings",
    "settings_error_message",
]
