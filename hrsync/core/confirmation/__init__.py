"""Whether DX took it (pure): verification, who DX counts, what a refusal names."""
