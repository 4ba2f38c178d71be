"""crowdsift's settings tree: the root ``Settings`` and its typed sections, read once.

``settings`` holds the root, ``sidecar``, ``experts`` and ``scoring`` the sections it loads
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
from crowdsift.core.config.scoring import ScoringConfig
from crowdsift.core.config.settings import SearchSort, Settings, SourceName, TimeFilter
from crowdsift.core.config.sidecar import SidecarConfig

__all__ = [
    "SECTIONS",
    "ExpertsConfig",
    "ScoringConfig",
    "SearchSort",
    "Settings",
    "SidecarConfig",
    "SourceName",
    "TimeFilter",
    "env_name",
    "get_settings",
    "load_settings",
    "settings_error_message",
]
