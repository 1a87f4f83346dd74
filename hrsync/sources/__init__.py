"""Readers of HR exports: CSV, JSON, from a file or an HTTP(S) URL."""
