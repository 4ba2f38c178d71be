"""crowdsift: answers a question with what real communities said about it."""

__version__ = "0.1.0"
