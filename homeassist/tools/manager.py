"""ToolManager: which tools a request of each intent kind may see (the tiers).

A small model chooses better among few tools, so each kind gets only what it needs. The tiers, the
acting tools and the local path's own are read from ``homeassist.toolspec``'s table. Tiers list tool
names; a tool of a part not built or not running is simply absent from what ``tools_for`` returns.
The browser tools are in no tier: the web fallback calls them itself.

``ACTING_TOOLS`` are those that change the home or what is scheduled; a request that may not act
(``[wyoming] allow_actions = false``) is offered none of them, and the executor refuses them.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool

from homeassist import toolspec
from homeassist.messages import INTENT_KINDS, IntentKind
from homeassist.tools.executor import ToolExecutor

#: The device tier: what a model is shown for a device request.
DEVICE_TOOLS: tuple[str, ...] = toolspec.names(tier="device")
#: Device tools only the local path runs, for what it reads exactly ("toggle the porch light", "dim the
#: lamp a bit", "turn the heat up"): in no tier, so no model is shown them (each tool shown costs every
#: device request its description).
LOCAL_TOOLS: tuple[str, ...] = toolspec.names(local_only=True)
#: Tools that switch, set or lock a device, or set, schedule or cancel a timer, alarm, reminder or
#: delayed action. Reading a device, listing devices or timers and the time are not among them.
ACTING_TOOLS: frozenset[str] = frozenset(toolspec.names(acts=True))
TIERS: dict[IntentKind, tuple[str, ...]] = {kind: toolspec.names(tier=kind) for kind in INTENT_KINDS}


class ToolManager:
    """Looks tiers up against the tools registered in the shared executor."""

    def __init__(self, executor: ToolExecutor) -> None:
        self._executor = executor

    def tools_for(self, kind: IntentKind, *also: IntentKind, acting: bool = True) -> list[BaseTool]:
        """The registered tools of a kind's tier, in tier order, then those of the ``also`` tiers that
        are not in it yet (an unsure route gets the union of the tiers in question); without
        ``acting``, none of ``ACTING_TOOLS``."""
        names = dict.fromkeys(name for tier in (kind, *also) for name in TIERS[tier])
        tools = (self._executor.get(name) for name in names if acting or name not in ACTING_TOOLS)
        return [tool for tool in tools if tool is not None]

    def runs_locally(self, tool: str, kind: IntentKind, *also: IntentKind, acting: bool = True) -> bool:
        """Whether the local path may run ``tool`` for a request of ``kind`` (and ``also``): a registered
        tool of their tiers, or of ``LOCAL_TOOLS`` for a device request; without ``acting``, none of
        ``ACTING_TOOLS``."""
        kinds = (kind, *also)
        names = (*(n for k in kinds for n in TIERS[k]), *(LOCAL_TOOLS if "device" in kinds else ()))
        return tool in names and (acting or tool not in ACTING_TOOLS) and self._executor.get(tool) is not None

    def describe(self) -> dict[IntentKind, dict[str, list[str]]]:
        """For each tier: the tools available now and those whose part is not running or not built."""
        return {
            kind: {
                "available": [n for n in names if self._executor.get(n) is not None],
                "missing": [n for n in names if self._executor.get(n) is None],
            }
            for kind, names in TIERS.items()
        }
