"""crowdsift's tests. A package so that ``tests.support`` imports from the repository root."""
