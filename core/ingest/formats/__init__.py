"""One small module per format. Each exposes `extract(...) -> Extracted` and
raises core.ingest.model.ExtractError for files it cannot turn into text."""
