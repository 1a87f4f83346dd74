"""Readers of HR exports: CSV, JSON, from a file or an HTTP(S) URL.

`hrsync.sources.open.open_export` is the one entry point; `base` holds the error types
and the `Export` handle. What the readers yield is `hrsync.core.export.rows` (pure, shared with
the core).
"""
