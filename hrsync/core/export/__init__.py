"""Reading an export (pure): rows and their limits, paths, templates, filters, page signs."""
