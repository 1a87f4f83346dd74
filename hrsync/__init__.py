"""hrsync keeps DX's team hierarchy in step with the HR system."""

__version__ = "0.1.0"
