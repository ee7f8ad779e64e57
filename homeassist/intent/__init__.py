"""Intent classification: request kind and the local command (pure, no I/O)."""

from homeassist.intent.classifier import IntentClassifier, normalize_text
from homeassist.intent.home import Home

__all__ = ["Home", "IntentClassifier", "normalize_text"]
