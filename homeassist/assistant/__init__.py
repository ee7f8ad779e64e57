"""The orchestrator: transcript in, reply out."""

from homeassist.assistant.core import Assistant
from homeassist.assistant.summary import log_summary

__all__ = ["Assistant", "log_summary"]
