"""The summarizer (seed 004): FetchResult → selector → prompt → engine → SummarizeResult."""
