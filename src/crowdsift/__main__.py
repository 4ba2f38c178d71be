"""``python -m crowdsift``: the same as the ``crowdsift`` command."""

from crowdsift.cli import main

main()
