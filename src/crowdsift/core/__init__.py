"""The core layer: models, settings, errors, text and citations, privacy, tracing, logging, the SQL
store.

Imports nothing from the other layers."""
