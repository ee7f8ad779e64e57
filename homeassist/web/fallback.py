"""WebSearchFallback: search the web with the browser and hand the model only what the page says.

The small model never sees the browser's tools. The fallback itself runs ``browser_navigate`` and
``browser_snapshot`` through the shared ToolExecutor (caller ``web``; the two tools are registered
there but belong to no tier), reads the results out of the snapshot (``homeassist.web.results``) and
returns them as text for the model to answer from, with no tools bound.

Contract:

- ``search`` never raises for a failure (cancellation apart): a ``SearchOutcome`` carries the results,
  or the ``WebSearchError`` a person will hear, and every tool call made on the way.
- Searches run one at a time (one browser tab), each bounded by ``budget_s`` from the moment it is
  asked, waiting for an earlier search included. A search cut short leaves the browser as it is; the
  next one navigates away.
- What was searched for never leaves ``search`` in an error or a WARNING line: an error's message
  (which becomes the reply's ``error``, and so a component's reason in ``/health``) has the URLs'
  queries and the words themselves left out (``without_query``); the words are logged at DEBUG only.
- The first result is opened only when ``open_first_result`` is on and the result's origin is one of
  ``allowed_origins`` (the browser refuses every other origin anyway).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, quote_plus, urlsplit

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from homeassist.errors import WebSearchBlocked, WebSearchError, WebSearchTimeout
from homeassist.llm.recovery import limit_text
from homeassist.messages import ToolResult
from homeassist.tools.executor import ToolExecutor
from homeassist.web.results import SearchResult, extract_results, format_results, parse_snapshot

_LOGGER = logging.getLogger(__name__)

NAVIGATE = "browser_navigate"
SNAPSHOT = "browser_snapshot"
#: What the user hears when a search takes longer than ``NOTICE_AFTER_S``.
LOOKUP_NOTICE = "Let me look that up."
NOTICE_AFTER_S = 1.0
#: The most of a result read out when no model can answer.
READ_OUT_CHARS = 200
MAX_RESULTS = 5
SEARXNG_HINT = (
    "set [web] search_url to a SearXNG instance on your network (e.g. 'http://searx.lan/search?q={query}'), "
    "which answers a home server without bot checks"
)

#: Words around the question that are not part of what to search for.
_LEAD = re.compile(
    r"^\s*(?:(?:hey|ok|okay)\s+\w+[,\s]+)?(?:please\s+)?(?:(?:can|could|would) you\s+)?"
    r"(?:(?:search|look)(?:\s+(?:on|up))?(?:\s+(?:the\s+)?(?:web|internet|online))?(?:\s+for)?|google|"
    r"find out|look up)\s+",
    re.IGNORECASE,
)
#: A URL's query and fragment: what a search URL carries the search words in.
_URL_QUERY = re.compile(r"""(\b[a-z][a-z0-9+.-]*://[^\s?#'"<>]*)[?#][^\s'"<>]*""", re.IGNORECASE)
#: Stands for what was left out.
ELIDED = "…"
_TRAIL = re.compile(
    r"(?:[\s,]+(?:please|for me|on the (?:web|internet)|online))+\s*[?.!]*\s*$|[?.!]+\s*$", re.I
)


class Browser(Protocol):
    """What the browser tools need: one MCP tool call on one server (``MCPIntegration.call``)."""

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> str: ...


class _NavigateArgs(BaseModel):
    url: str = Field(description="the address to open")


class _NoArgs(BaseModel):
    pass


def browser_tools(browser: Browser, server: str = "playwright") -> list[BaseTool]:
    """``browser_navigate`` and ``browser_snapshot`` of the MCP server, for the ToolExecutor. Nothing
    starts until the first call (the server starts lazily)."""

    async def navigate(url: str) -> str:
        return await browser.call(server, NAVIGATE, {"url": url})

    async def snapshot() -> str:
        return await browser.call(server, SNAPSHOT, {})

    specs: tuple[tuple[str, str, type[BaseModel], Callable[..., Awaitable[str]]], ...] = (
        (NAVIGATE, "Open a web page in the browser.", _NavigateArgs, navigate),
        (SNAPSHOT, "The open page as an accessibility snapshot.", _NoArgs, snapshot),
    )
    return [
        StructuredTool(
            name=name, description=about, args_schema=args, coroutine=run, metadata={"mcp_server": server}
        )
        for name, about, args, run in specs
    ]


@dataclass(frozen=True)
class SearchOutcome:
    """One search: what it found (possibly nothing), or why it failed, and the tool calls it made."""

    query: str
    results: tuple[SearchResult, ...] = ()
    #: The text of the first result's page, when it was opened.
    page_text: str = ""
    error: WebSearchError | None = None
    actions: tuple[ToolResult, ...] = ()
    elapsed_ms: float = 0.0
    max_chars: int = 2000

    @property
    def found(self) -> bool:
        return self.error is None and bool(self.results)

    def context(self) -> str:
        """The results as the model reads them."""
        return format_results(self.query, list(self.results), self.max_chars, self.page_text)

    def read_out(self) -> str:
        """The top result as a spoken sentence, with its source (when no model can answer)."""
        if not self.results:
            return ""
        top = self.results[0]
        said = limit_text(top.snippet or top.title, READ_OUT_CHARS)
        return f"Here's what {top.source} says: {said}"


class WebSearchFallback:
    """Searches with the browser tools registered in ``executor``; one search at a time."""

    def __init__(
        self,
        executor: ToolExecutor,
        *,
        search_url: str,
        budget_s: float = 10.0,
        max_chars: int = 2000,
        open_first_result: bool = False,
        allowed_origins: Sequence[str] = (),
        max_results: int = MAX_RESULTS,
    ) -> None:
        self.executor = executor
        self.search_url = search_url
        self.budget_s = budget_s
        self.max_chars = max_chars
        self.open_first_result = open_first_result
        self.allowed_origins = frozenset(origin(o) for o in allowed_origins)
        self.max_results = max_results
        self._lock = asyncio.Lock()

    async def search(self, text: str) -> SearchOutcome:
        """Search for what ``text`` asks; never raises for a failure."""
        query = search_query(text)
        start = time.perf_counter()
        actions: list[ToolResult] = []
        results: list[SearchResult] = []
        page_text = ""
        error: WebSearchError | None = None
        try:
            async with asyncio.timeout(self.budget_s):
                async with self._lock:
                    results, page_text = await self._search(query, actions)
        except TimeoutError:
            error = WebSearchTimeout(f"no results within [web] budget_s = {self.budget_s:g} s")
        except WebSearchError as err:
            error = err
        elapsed = round((time.perf_counter() - start) * 1000, 3)
        if error is not None:
            _LOGGER.debug("Web search for %r failed: %s", query, error)
            private = without_query(str(error), query)
            if private != str(error):
                error = type(error)(private, spoken=error.spoken)
            fix = SEARXNG_HINT if isinstance(error, WebSearchBlocked) else _fix(actions)
            _LOGGER.warning("Web search failed after %.0f ms: %s; %s", elapsed, error, fix)
        else:
            _LOGGER.debug("Web search for %r: %d results in %.0f ms", query, len(results), elapsed)
        return SearchOutcome(
            query=query,
            results=tuple(results),
            page_text=page_text,
            error=error,
            actions=tuple(actions),
            elapsed_ms=elapsed,
            max_chars=self.max_chars,
        )

    async def _search(self, query: str, actions: list[ToolResult]) -> tuple[list[SearchResult], str]:
        url = self.search_url.replace("{query}", quote_plus(query))
        await self._run(NAVIGATE, {"url": url}, actions)
        page = parse_snapshot(await self._run(SNAPSHOT, {}, actions))
        if page.is_challenge():
            # A title that repeats the search words is left out (the error is logged and kept).
            title = ELIDED if _mentions(page.title, query) else page.title
            raise WebSearchBlocked(f"{urlsplit(url).netloc} answered with a bot check ({title!r})")
        results = extract_results(page, limit=self.max_results)
        page_text = ""
        if self.open_first_result and results:
            first = next((r for r in results if origin(r.url) in self.allowed_origins), None)
            if first is not None:
                await self._run(NAVIGATE, {"url": first.url}, actions)
                article = parse_snapshot(await self._run(SNAPSHOT, {}, actions))
                page_text = article.text(self.max_chars // 2)
        return results, page_text

    async def _run(self, tool: str, args: dict[str, Any], actions: list[ToolResult]) -> str:
        result = await self.executor.execute(tool, args, caller="web")
        actions.append(result)
        if not result.ok:
            raise WebSearchError(f"{tool} failed: {result.content.removeprefix('Error:').strip()}")
        return result.content


def search_query(text: str) -> str:
    """What to type into the search box: the request without "search the web for", "please", "?"."""
    query = _LEAD.sub("", text, count=1)
    query = _TRAIL.sub("", query).strip()
    return query or text.strip()


def without_query(message: str, query: str = "") -> str:
    """``message`` with no trace of a search: every URL's query and fragment left out, and ``query``
    itself, as typed or URL-encoded (a page title may repeat it)."""
    message = _URL_QUERY.sub(rf"\1?{ELIDED}", message)
    words = query.strip()
    for form in sorted({words, quote_plus(words), quote(words)}, key=len, reverse=True):
        if len(form) >= 2:
            message = re.sub(re.escape(form), ELIDED, message, flags=re.IGNORECASE)
    return message


def _mentions(text: str, query: str) -> bool:
    """Whether ``text`` has a word of ``query`` in it (words of three letters or more)."""
    words = set(re.findall(r"\w{3,}", query.lower()))
    return bool(words & set(re.findall(r"\w{3,}", text.lower())))


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased (how origins are compared)."""
    parts = urlsplit(url.strip())
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}{port}"


def _fix(actions: list[ToolResult]) -> str:
    if actions and "MCP server" in actions[-1].content:
        return "see the MCP server's lines above; scripts/setup installs Chromium and @playwright/mcp"
    return "check [web] search_url and that this machine can reach it"
