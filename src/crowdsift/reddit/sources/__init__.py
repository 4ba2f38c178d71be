"""Sources of Reddit content. Each yields Reddit's own raw t3/t1 ``data`` dicts."""
