"""The home: its devices and rooms as typed, frozen data (``model``), the index the classifier matches
words against (``index``), and the one resolver of what a name said names (``resolve``).

The bottom layer: it imports only ``vocabulary``; Z-Wave builds the model, the intent and tools layers
read it.
"""

from homeassist.home.index import Candidate, HomeIndex, IndexedDevice, index_of, normalize_name
from homeassist.home.model import HomeDevice, HomeModel, HomeSnapshot, SnapshotDevice, home_model
from homeassist.home.resolve import Ambiguous, Names, NotFound, Resolved

__all__ = [
    "Ambiguous",
    "Candidate",
    "HomeDevice",
    "HomeIndex",
    "HomeModel",
    "HomeSnapshot",
    "IndexedDevice",
    "Names",
    "NotFound",
    "Resolved",
    "SnapshotDevice",
    "home_model",
    "index_of",
    "normalize_name",
]
