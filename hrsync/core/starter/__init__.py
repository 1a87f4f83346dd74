"""`hrsync init`: guessing the fields from an export, and the starter config it writes (pure)."""
