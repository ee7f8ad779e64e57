"""The web-search fallback: the Playwright MCP browser reads a search page when the model cannot answer."""
