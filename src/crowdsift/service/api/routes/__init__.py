"""One module per resource: research jobs, fetch, feed, experts, health, the web page."""
