"""The stand-ins the benches share with the test suite, and the one place in scripts/bench that reaches
into ``tests/`` for them.

Contract: ``from harness.doubles import NAME`` gives the test suite's own stand-in, imported when first
asked for (so a bench that needs none of them loads none of their dependencies):

- ``VoiceDevice``, ``DeviceState``, ``Run``, ``Connection``, ``CHUNK_BYTES``, ``CHUNK_S``: the emulated
  ESPHome voice device (tests/esphome);
- ``OllamaStandIn``, ``Turn``, ``Chunk``, ``Pause``, ``reply``, ``stream``, ``tool_calls``: the scripted
  Ollama server (tests/llm/standin.py);
- ``LlamaServer``, ``cached_model``, ``CALL_TEXT``, ``MODEL_0_5B``, ``MODEL_1_5B``: the real embedded
  model's server (tests/llm/real_model.py);
- ``SearchSite``: the local search results site (tests/web/search_site.py).

These are emulators of other programs, not fixtures of one test; they belong in a package both the
tests and the benches import (outside ``tests/``). Until they move, this module is the only import
from ``tests`` here: moving them changes the table below and nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers (at run time each is imported when asked for)
    from tests.esphome.emulator import DeviceState as DeviceState
    from tests.esphome.emulator import Run as Run
    from tests.esphome.emulator import VoiceDevice as VoiceDevice
    from tests.esphome.framing import _Connection as Connection
    from tests.esphome.records import CHUNK_BYTES as CHUNK_BYTES
    from tests.esphome.records import CHUNK_S as CHUNK_S
    from tests.llm.real_model import CALL_TEXT as CALL_TEXT
    from tests.llm.real_model import MODEL_0_5B as MODEL_0_5B
    from tests.llm.real_model import MODEL_1_5B as MODEL_1_5B
    from tests.llm.real_model import LlamaServer as LlamaServer
    from tests.llm.real_model import cached_model as cached_model
    from tests.llm.standin import Chunk as Chunk
    from tests.llm.standin import OllamaStandIn as OllamaStandIn
    from tests.llm.standin import Pause as Pause
    from tests.llm.standin import Turn as Turn
    from tests.llm.standin import reply as reply
    from tests.llm.standin import stream as stream
    from tests.llm.standin import tool_calls as tool_calls
    from tests.web.search_site import SearchSite as SearchSite

#: name here -> (module, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "VoiceDevice": ("tests.esphome.emulator", "VoiceDevice"),
    "DeviceState": ("tests.esphome.emulator", "DeviceState"),
    "Run": ("tests.esphome.emulator", "Run"),
    "Connection": ("tests.esphome.framing", "_Connection"),
    "CHUNK_BYTES": ("tests.esphome.records", "CHUNK_BYTES"),
    "CHUNK_S": ("tests.esphome.records", "CHUNK_S"),
    "OllamaStandIn": ("tests.llm.standin", "OllamaStandIn"),
    "Turn": ("tests.llm.standin", "Turn"),
    "Chunk": ("tests.llm.standin", "Chunk"),
    "Pause": ("tests.llm.standin", "Pause"),
    "reply": ("tests.llm.standin", "reply"),
    "stream": ("tests.llm.standin", "stream"),
    "tool_calls": ("tests.llm.standin", "tool_calls"),
    "LlamaServer": ("tests.llm.real_model", "LlamaServer"),
    "cached_model": ("tests.llm.real_model", "cached_model"),
    "CALL_TEXT": ("tests.llm.real_model", "CALL_TEXT"),
    "MODEL_0_5B": ("tests.llm.real_model", "MODEL_0_5B"),
    "MODEL_1_5B": ("tests.llm.real_model", "MODEL_1_5B"),
    "SearchSite": ("tests.web.search_site", "SearchSite"),
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
