"""The generic MCP client: servers over stdio, their tools as LangChain tools (the Playwright browser
server's particulars are in ``homeassist.web.playwright``)."""

from homeassist.errors import MCPError
from homeassist.mcp.integration import MCPIntegration
from homeassist.mcp.session import ServerConfig

__all__ = ["MCPError", "MCPIntegration", "ServerConfig"]
