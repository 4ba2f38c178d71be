"""Sources: Reddit (API, Arctic Shift, the local archive), expert channel archives, YouTube, Amazon.

Each source turns a request into raw items; the pipeline screens them. Sources import core, engines
and http only."""
