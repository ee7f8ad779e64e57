"""homeassist: a local voice home-assistant daemon."""

__version__ = "0.1.0"
