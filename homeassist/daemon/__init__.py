"""The daemon: the parts built from settings (``runtime``), supervised components, the request queue,
the console, and ``main`` which runs them all as ``homeassist run``."""

from homeassist.daemon.runtime import Runtime, build_model_client, build_runtime

__all__ = ["Runtime", "build_model_client", "build_runtime"]
