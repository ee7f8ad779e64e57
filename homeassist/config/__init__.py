"""Configuration: typed settings (``settings``), loading and errors (``loader``), display (``render``)."""

from homeassist.config.loader import LoadedConfig, load_settings, state_dir
from homeassist.config.settings import Settings

__all__ = ["LoadedConfig", "Settings", "load_settings", "state_dir"]
