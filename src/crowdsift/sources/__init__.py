"""Sources beyond Reddit (YouTube, Amazon): each yields ``EvidenceItem``s behind the seed-002
relevance gate, so the summarizer can cite them beside Reddit threads."""
