"""LocalClient: what the clients of a model server of the home's own share (``OllamaClient``, and
``OpenAIClient`` with the ``EmbeddedClient`` on it), as against Anthropic's API.

The shared loop's settings come from ``[ollama]`` (``timeout_s``, ``retry_empty``), and the profile
is chosen by the model's name with the ``[models.*]`` overrides until the provider's ``detect`` has
asked the server (once: ``_detected``).
"""

from __future__ import annotations

from collections.abc import Mapping

from homeassist.config.model import ModelOverride, OllamaSettings
from homeassist.llm.chat import ChatClient
from homeassist.llm.profiles import overrides_of, profile_for
from homeassist.tools.executor import ToolExecutor


class LocalClient(ChatClient):
    """The loop on a model server of the home's own; subclasses set ``chat`` and ``detect``."""

    def __init__(
        self,
        executor: ToolExecutor,
        model_name: str,
        ollama: OllamaSettings,
        *,
        max_tool_rounds: int,
        models: Mapping[str, ModelOverride] | None,
    ) -> None:
        super().__init__(
            executor,
            model_name=model_name,
            timeout_s=ollama.timeout_s,
            retry_empty=ollama.retry_empty,
            max_tool_rounds=max_tool_rounds,
        )
        self._overrides = overrides_of(models)
        #: From the model's name until ``detect`` has asked the server about it.
        self.profile = profile_for(model_name, overrides=self._overrides)
        self._detected = False
