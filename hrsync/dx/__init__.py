"""The DX Web API client."""
