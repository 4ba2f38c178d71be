"""``python -m crowdsift``: the same as the ``crowdsift`` command."""

from crowdsift.cli.main import main

main()
