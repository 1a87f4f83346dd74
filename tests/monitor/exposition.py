"""Reading a /metrics exposition in tests."""

from __future__ import annotations


def sample(text: str, name: str) -> float | None:
    """The value of the sample `name` (with its labels, as written), or None."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None
