"""Loading the settings and checking them across keys."""
