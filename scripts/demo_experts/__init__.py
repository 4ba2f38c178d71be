"""Hand-written expert channels for crowdsift's demo (sample data, not real channels or people).

``scripts/build_demo_experts.py`` renders each ``Channel`` as a Telegram Desktop export.
"""

from __future__ import annotations

from demo_experts import dataeng_ru, gadgets, homelab
from demo_experts.model import Channel

CHANNELS: tuple[Channel, ...] = (homelab.CHANNEL, dataeng_ru.CHANNEL, gadgets.CHANNEL)
