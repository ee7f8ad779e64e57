"""The embedded model server: llama.cpp's ``llama-server``, run by the daemon itself, so a fresh set-up
answers with the model ``scripts/setup-llm`` cached, with no Ollama (``[ollama] provider = "embedded"``,
or ``"auto"`` when no Ollama serves ``[ollama] model``; :func:`choose_provider`).

This module is the client and the choice; the rest is in modules of one concern each:

- ``embedded_files``: the cache and the two files a start needs (the server binary, ``[embedded]
  server`` or the cache's; the model, ``[embedded] model``: a cached name or a GGUF path), checked
  before each start; a missing or damaged one is a :class:`ModelNotConfiguredError` naming the fix.
- ``embedded_server``: :class:`EmbeddedServer`, the process: loopback only, offline, niced, never
  orphaned, its log in the state directory, its start bounded.
- ``embedded_slots``: one slot per kind of request (:data:`SLOTS`, pinned by ``id_slot``), each kind's
  processed prompt saved after the warm-up and restored at the next start.

The daemon's ``model`` component supervises the server (``daemon/monitors.watch_model``): start, warm,
watch; an exit is a failure the supervisor restarts with backoff, and a request meanwhile hears that
the model is restarting. Without a supervisor (``homeassist ask`` in-process) the first request starts
it, and ``aclose`` stops it.

:class:`EmbeddedClient` is the OpenAI-compatible client (``OpenAIClient``) pointed at it: each kind of
request in its own slot, a request while the server does not serve told so at once, and a server that
dies under a request reported as its exit (the supervisor restarts it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Literal

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from homeassist.config.model import EmbeddedSettings, ModelOverride, OllamaSettings, OpenAISettings
from homeassist.errors import ModelError, ModelNotConfiguredError, ModelResponseError, ModelUnreachableError
from homeassist.llm.embedded_files import (
    model_file,
    server_file,
)
from homeassist.llm.embedded_server import (
    EmbeddedServer,
)
from homeassist.llm.embedded_slots import SLOTS
from homeassist.llm.openai import OpenAIClient
from homeassist.llm.prompts import answering_kind
from homeassist.messages import IntentKind
from homeassist.tools.executor import ToolExecutor

__all__ = ["AUTO_PROBE_S", "EmbeddedClient", "choose_provider"]

_LOGGER = logging.getLogger(__name__)

#: ``auto``: how long Ollama gets to say which models it has.
AUTO_PROBE_S = 2.0


# --- the client -------------------------------------------------------------------------------------


class EmbeddedClient(OpenAIClient):
    """The OpenAI-compatible client on the embedded server: each kind of request in its own slot, and a
    request while the server does not serve told so at once."""

    #: A new connection for every request: llama-server closes a kept-alive connection after a few
    #: requests, and the request that reuses it then fails unsent ("Server disconnected without sending
    #: a response", measured on every fourth or fifth). A loopback connect costs well under a millisecond.
    keepalive_connections = 0
    provider = "embedded"

    def __init__(
        self,
        server: EmbeddedServer,
        executor: ToolExecutor,
        *,
        ollama: OllamaSettings,
        max_tool_rounds: int = 5,
        models: Mapping[str, ModelOverride] | None = None,
        chosen_because: str = "",
    ) -> None:
        self.server = server
        openai = OpenAISettings(
            base_url=server.openai_url, model=server.label, api_key="", max_tokens=ollama.num_predict
        )
        super().__init__(openai, executor, ollama=ollama, max_tool_rounds=max_tool_rounds, models=models)
        self.chosen_because = chosen_because

    @property
    def description(self) -> str:
        why = f" ({self.chosen_because})" if self.chosen_because else ""
        return f"embedded llama-server, model {self.server.label}, at {self.server.url}{why}"

    def _follow(self) -> None:
        """The server may have moved to another port at its last start: the chat model follows."""
        if self.settings.base_url != self.server.openai_url:
            self.settings = self.settings.model_copy(update={"base_url": self.server.openai_url})
            self.chat = self._make_chat()

    async def serve(self) -> None:
        """Start the server if it does not serve (the supervised start, or a one-shot request's)."""
        await self.server.start()
        self._follow()

    async def _ready(self) -> None:
        """A request while the server does not serve: told so at once under the daemon's supervision,
        else (``homeassist ask``) it starts the server."""
        if not self.server.serving:
            if self.server.supervised:
                raise self.server.not_serving_error()
            await self.serve()  # no daemon supervises it (homeassist ask): this request starts it
        self._follow()

    async def probe(self, timeout_s: float) -> None:
        if not self.server.serving:
            raise self.server.not_serving_error()
        await super().probe(timeout_s)

    async def warm_up(self) -> bool:
        self._follow()
        return await super().warm_up()

    async def warm_tiers(self, tiers: Mapping[IntentKind, Sequence[BaseTool]]) -> dict[str, float]:
        """The saved slots first (a restart is warm at once), then each tier's prompt (only what differs
        from the restored one is processed), then the slots saved for the next start."""
        kinds = [kind for kind in tiers if kind in SLOTS]
        restored = await self.server.restore_slots(kinds)
        if restored:
            _LOGGER.info("Embedded model: processed prompts restored (%s)", ", ".join(restored))
        took = await super().warm_tiers(tiers)
        if took:
            await self.server.save_slots([kind for kind in kinds if kind in took])
        return took

    def _pinned(self, chat: BaseChatModel) -> BaseChatModel:
        kind = answering_kind.get()
        if kind is None or kind not in SLOTS:
            return chat
        extra = dict(getattr(chat, "extra_body", None) or {})
        extra["id_slot"] = SLOTS[kind]
        return chat.model_copy(update={"extra_body": extra})

    def _server_error(self, err: Exception) -> ModelError | None:
        mapped = super()._server_error(err)
        died = self.server.exit_status() is not None
        if isinstance(mapped, ModelUnreachableError | ModelResponseError) and died:
            return self.server.exited_error()  # it died under the request: the supervisor restarts it
        return mapped

    async def aclose(self) -> None:
        await super().aclose()
        await self.server.stop()


def choose_provider(
    ollama: OllamaSettings, embedded: EmbeddedSettings, env: Mapping[str, str] | None = None
) -> tuple[Literal["ollama", "embedded"], str]:
    """``[ollama] provider = "auto"``: Ollama when it answers at ``base_url`` and has ``model``, else the
    embedded server when its files are there, else Ollama (whose errors then say what to start). Returns
    the choice and why (for the log and ``/health``). Bounded by :data:`AUTO_PROBE_S`."""
    url, model = ollama.base_url, ollama.model
    try:
        response = httpx.get(f"{url}/api/tags", timeout=AUTO_PROBE_S, trust_env=False)
        listed = response.json().get("models") or []
        names = {str(m.get(key)) for m in listed if isinstance(m, dict) for key in ("name", "model")}
    except (httpx.HTTPError, ValueError, AttributeError) as err:
        no_ollama = f"no Ollama at {url}: {type(err).__name__}"
    else:
        if _tagged(model) in {_tagged(name) for name in names}:
            return "ollama", f"Ollama at {url} serves {model}"
        no_ollama = f"Ollama at {url} does not have {model} (`ollama pull {model}`)"
    try:
        server_file(embedded, env)
        model_file(embedded, env)
    except ModelNotConfiguredError as err:
        return "ollama", f"{no_ollama}; no embedded model either: {err}"
    return "embedded", no_ollama


def _tagged(name: str) -> str:
    """``qwen3`` and ``qwen3:latest`` are the same Ollama model."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"
