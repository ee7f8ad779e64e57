"""The home: its devices and rooms as typed, frozen data (``model``), the index words are matched
against (``index``), what a request's words say (``words``, ``said``, ``rooms``) and the one resolver
of what they name (``resolve``).

The bottom layer: it imports only ``vocabulary`` and ``numbers``; Z-Wave builds the model, the intent
and tools layers read it.
"""

from homeassist.home.index import Candidate, HomeIndex, IndexedDevice, index_of, normalize_name
from homeassist.home.model import HomeDevice, HomeModel, HomeSnapshot, SnapshotDevice, home_model
from homeassist.home.resolve import resolve
from homeassist.home.said import MAX_CHOICES, Ask, NotFound, Resolved, Said
from homeassist.home.words import normalize_text, parse

__all__ = [
    "MAX_CHOICES",
    "Ask",
    "Candidate",
    "HomeDevice",
    "HomeIndex",
    "HomeModel",
    "HomeSnapshot",
    "IndexedDevice",
    "NotFound",
    "Resolved",
    "Said",
    "SnapshotDevice",
    "home_model",
    "index_of",
    "normalize_name",
    "normalize_text",
    "parse",
    "resolve",
]
