"""Reddit: transport (HTTP, auth, rate limits), sources, pure filtering, and the fetcher."""
