"""A faithful fake of the DX Web API, for the demo and the tests."""
