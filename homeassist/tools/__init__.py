"""Tools: the shared ToolExecutor, the tiers (ToolManager) and the tools themselves."""

from homeassist.tools.executor import ToolExecutor, normalize_result, tool_messages
from homeassist.tools.manager import TIERS, ToolManager

__all__ = ["TIERS", "ToolExecutor", "ToolManager", "normalize_result", "tool_messages"]
