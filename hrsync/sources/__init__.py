"""Readers of HR exports: CSV, JSON, from a file or an HTTP(S) URL.

`hrsync.sources.open.open_export` is the one entry point; `rows` is what the readers
yield (pure, shared with the core), `base` the error types and the `Export` handle.

This `__init__` stays empty: the core imports `hrsync.sources.rows`, and importing it
must load no HTTP client and no logging.
"""
