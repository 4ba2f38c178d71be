"""The Reddit branch (seed 001's "sidecar"): formulate, scout, dedupe, rerank, drill, synthesize."""
