"""The embedded server's prompt slots: one per kind of request (:data:`SLOTS`, pinned by ``id_slot``),
so each kind keeps its processed prompt (system prompt and tools). :class:`SlotCache` saves them under
the state directory after the warm-up (llama-server's ``--slot-save-path``) and restores them at the next
start, so a restarted daemon is warm again in a moment. The files are named by the model file (its path,
size and time) and the context size they belong to, so a cache is never restored into another model;
saving removes the files of other models. A failed save or restore is logged at DEBUG and counts as not
done: the slots are an optimisation, never a reason to fail."""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import httpx

from homeassist.config.model import EmbeddedSettings
from homeassist.errors import ModelNotConfiguredError
from homeassist.llm.embedded_files import model_file
from homeassist.messages import IntentKind

_LOGGER = logging.getLogger(__name__)

#: One slot per kind of request: its prompt prefix (system prompt and tools) stays processed there.
SLOTS: dict[IntentKind, int] = {"general": 0, "datetime": 1, "timer": 2, "device": 3, "web": 4}
SLOT_DIR = "llm-slots"


class SlotCache:
    """The slot files of one server: under ``directory``, for the model ``settings`` names, saved and
    restored through the server at ``url()`` (read at each request: the server may move port)."""

    def __init__(
        self,
        settings: EmbeddedSettings,
        directory: Path,
        *,
        label: str,
        url: Callable[[], str],
        timeout_s: float,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.directory = directory
        self.label = label
        self.url = url
        self.timeout_s = timeout_s
        self.env = env

    def file_name(self, kind: str) -> str:
        """The slot file of ``kind`` for this model file (its path, size and time), so a cache is never
        restored into another model."""
        try:
            model = model_file(self.settings, self.env)
            stat = model.stat()
            key = f"{model.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{self.settings.context}"
        except (OSError, ModelNotConfiguredError):
            key = self.settings.model
        return f"{self.label}-{hashlib.sha256(key.encode()).hexdigest()[:12]}-{kind}.bin"

    async def _action(self, kind: IntentKind, action: Literal["save", "restore"]) -> bool:
        body = {"filename": self.file_name(kind)}
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, trust_env=False) as client:
                response = await client.post(f"{self.url()}/slots/{SLOTS[kind]}?action={action}", json=body)
        except httpx.HTTPError as err:
            _LOGGER.debug("Slot %s of %s failed: %s", action, kind, err)
            return False
        if response.is_error:
            _LOGGER.debug("Slot %s of %s: HTTP %s", action, kind, response.status_code)
            return False
        return True

    async def restore(self, kinds: Sequence[IntentKind]) -> list[IntentKind]:
        """Restore each kind's saved slot (processed prompt), where a file of this model is there."""
        restored = []
        for kind in kinds:
            if (self.directory / self.file_name(kind)).is_file() and await self._action(kind, "restore"):
                restored.append(kind)
        return restored

    async def save(self, kinds: Sequence[IntentKind]) -> list[IntentKind]:
        """Save each kind's slot; slot files of other models (or sizes) are removed."""
        saved = [kind for kind in kinds if await self._action(kind, "save")]
        keep = {self.file_name(kind) for kind in SLOTS}
        for path in self.directory.glob("*.bin"):
            if path.name not in keep:
                with contextlib.suppress(OSError):
                    path.unlink()
        return saved
