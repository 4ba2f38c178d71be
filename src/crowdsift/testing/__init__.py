"""Real local servers and fakes that speak the protocols crowdsift talks, for tests and users."""
