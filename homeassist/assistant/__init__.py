"""The orchestrator: transcript in, reply out."""

from homeassist.assistant.core import Assistant, log_summary

__all__ = ["Assistant", "log_summary"]
