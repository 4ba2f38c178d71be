"""Reddit's sources (OAuth API, Arctic Shift) and what is Reddit-shaped about them: lookup,
pagination, permalinks, metadata vetoes, comment trees."""
