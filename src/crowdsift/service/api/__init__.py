"""The HTTP API and web page: ``create_app(settings)`` (``crowdsift serve`` runs it)."""
