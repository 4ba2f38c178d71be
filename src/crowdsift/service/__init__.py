"""What every front end calls (facade), the HTTP API, research jobs, the MCP server, metrics."""
