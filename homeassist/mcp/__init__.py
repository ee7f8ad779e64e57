"""MCP servers over stdio (the Playwright browser server among them), their tools as LangChain tools."""

from homeassist.errors import MCPError
from homeassist.mcp.integration import (
    MCPIntegration,
    ServerConfig,
    playwright_server,
    write_playwright_config,
)

__all__ = ["MCPError", "MCPIntegration", "ServerConfig", "playwright_server", "write_playwright_config"]
