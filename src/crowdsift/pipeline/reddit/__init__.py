"""The Reddit sidecar (seed 001, phase 8): formulate, scout, dedupe, rerank, drill, synthesize."""
