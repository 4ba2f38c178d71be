"""The ``crowdsift`` command (typer) and terminal rendering."""
