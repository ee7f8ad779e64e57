"""Tools: the shared ToolExecutor (``executor``), the tiers (``manager``) and the tools themselves.

Nothing is imported here: ``homeassist.intent`` reads the ``at`` contract from ``tools.when`` without
loading LangChain.
"""
