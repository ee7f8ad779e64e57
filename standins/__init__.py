"""Emulators of the programs homeassist talks to, shared by the tests and the benches (``scripts/bench``):
an ESPHome voice device on the native API (``esphome``), a scripted Ollama server (``ollama``, on the
HTTP life ``server`` gives every stand-in), the real embedded model's server (``llama``) and a local
search results site (``search_site``). Each speaks the real protocol on 127.0.0.1 only; none is part of
the daemon."""
