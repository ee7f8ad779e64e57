"""The stand-ins the benches share with the test suite (the repository's ``standins`` package, outside
``tests/``: emulators of other programs, not fixtures of one test).

Contract: ``from harness.doubles import NAME`` gives the stand-in, imported when first asked for (so a
bench that needs none of them loads none of their dependencies):

- ``VoiceDevice``, ``DeviceState``, ``Run``, ``Connection``, ``CHUNK_BYTES``, ``CHUNK_S``: the emulated
  ESPHome voice device (standins/esphome);
- ``OllamaStandIn``, ``Turn``, ``Chunk``, ``Pause``, ``reply``, ``stream``, ``tool_calls``: the scripted
  Ollama server (standins/ollama.py);
- ``LlamaServer``, ``cached_model``, ``CALL_TEXT``, ``MODEL_0_5B``, ``MODEL_1_5B``: the real embedded
  model's server (standins/llama.py);
- ``SearchSite``: the local search results site (standins/search_site.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers (at run time each is imported when asked for)
    from standins.esphome.emulator import DeviceState as DeviceState
    from standins.esphome.emulator import Run as Run
    from standins.esphome.emulator import VoiceDevice as VoiceDevice
    from standins.esphome.framing import _Connection as Connection
    from standins.esphome.records import CHUNK_BYTES as CHUNK_BYTES
    from standins.esphome.records import CHUNK_S as CHUNK_S
    from standins.llama import CALL_TEXT as CALL_TEXT
    from standins.llama import MODEL_0_5B as MODEL_0_5B
    from standins.llama import MODEL_1_5B as MODEL_1_5B
    from standins.llama import LlamaServer as LlamaServer
    from standins.llama import cached_model as cached_model
    from standins.ollama import Chunk as Chunk
    from standins.ollama import OllamaStandIn as OllamaStandIn
    from standins.ollama import Pause as Pause
    from standins.ollama import Turn as Turn
    from standins.ollama import reply as reply
    from standins.ollama import stream as stream
    from standins.ollama import tool_calls as tool_calls
    from standins.search_site import SearchSite as SearchSite

#: name here -> (module, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "VoiceDevice": ("standins.esphome.emulator", "VoiceDevice"),
    "DeviceState": ("standins.esphome.emulator", "DeviceState"),
    "Run": ("standins.esphome.emulator", "Run"),
    "Connection": ("standins.esphome.framing", "_Connection"),
    "CHUNK_BYTES": ("standins.esphome.records", "CHUNK_BYTES"),
    "CHUNK_S": ("standins.esphome.records", "CHUNK_S"),
    "OllamaStandIn": ("standins.ollama", "OllamaStandIn"),
    "Turn": ("standins.ollama", "Turn"),
    "Chunk": ("standins.ollama", "Chunk"),
    "Pause": ("standins.ollama", "Pause"),
    "reply": ("standins.ollama", "reply"),
    "stream": ("standins.ollama", "stream"),
    "tool_calls": ("standins.ollama", "tool_calls"),
    "LlamaServer": ("standins.llama", "LlamaServer"),
    "cached_model": ("standins.llama", "cached_model"),
    "CALL_TEXT": ("standins.llama", "CALL_TEXT"),
    "MODEL_0_5B": ("standins.llama", "MODEL_0_5B"),
    "MODEL_1_5B": ("standins.llama", "MODEL_1_5B"),
    "SearchSite": ("standins.search_site", "SearchSite"),
}

__all__ = [
    "CALL_TEXT",
    "CHUNK_BYTES",
    "CHUNK_S",
    "MODEL_0_5B",
    "MODEL_1_5B",
    "Chunk",
    "Connection",
    "DeviceState",
    "LlamaServer",
    "OllamaStandIn",
    "Pause",
    "Run",
    "SearchSite",
    "Turn",
    "VoiceDevice",
    "cached_model",
    "reply",
    "stream",
    "tool_calls",
]


def __getattr__(name: str) -> Any:
    try:
        module, there = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(importlib.import_module(module), there)
