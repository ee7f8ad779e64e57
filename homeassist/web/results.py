"""Reading a search page: Playwright MCP's accessibility snapshot -> results (title, snippet, link).

``browser_snapshot`` answers with a few markdown sections (``- Page URL:``, ``- Page Title:``) and the
page as an ARIA snapshot in a YAML block: one node per line, ``- role "name" [attr=value]:`` with its
children indented below and a link's address in a ``- /url:`` child. That format is the same for every
site, so extraction needs no per-site HTML selectors:

- a result starts at a heading that holds a link (DuckDuckGo's ``h2 > a``, SearXNG's ``h3 > a``, most
  engines' markup); its snippet is the text that follows, up to the next such heading;
- redirect links (``/l/?uddg=``, ``/url?q=``) are decoded to the page they lead to; links back to the
  search site itself (ads through ``y.js``, paging, settings) are not results;
- a page without such headings (an article) is read as text.

A bot-challenge page is recognised by its words, so that it is reported, never read out as an answer.
Pure functions; the browser is driven by ``homeassist.web.fallback``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urljoin, urlsplit

#: Query parameters that redirect links carry their target in (DuckDuckGo, Google, Bing and others).
REDIRECT_PARAMS = ("uddg", "u", "url", "q", "target")
#: Roles whose name is the node's text (read as page text and snippets).
TEXT_ROLES = frozenset({"paragraph", "text", "link", "listitem", "cell", "blockquote", "strong", "emphasis"})
#: Roles never read: page furniture and form controls.
SKIP_ROLES = frozenset({"img", "button", "textbox", "searchbox", "combobox", "checkbox", "radio", "option"})

#: What bot-challenge and rate-limit pages say (DuckDuckGo, Cloudflare, Google, SearXNG's limiter).
CHALLENGE = re.compile(
    r"bots use duckduckgo too|complete the following challenge|confirm this search was made by a human|"
    r"unusual traffic from your computer|are you a robot|verify (?:that )?you are (?:a )?human|"
    r"checking (?:if the site connection is secure|your browser)|just a moment\.\.\.|captcha|"
    r"too many requests|rate limit(?:ed)? exceeded",
    re.IGNORECASE,
)

_LINE = re.compile(r"^(?P<indent>\s*)- (?P<item>.*)$")
_NODE = re.compile(
    r'^(?P<role>[\w/-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?(?P<attrs>(?: \[[^\]]*\])*)(?P<rest>.*)$'
)
_YAML_BLOCK = re.compile(r"```yaml\n(?P<body>.*?)\n```", re.DOTALL)
_PAGE_FIELD = re.compile(r"^- Page (?P<key>URL|Title): (?P<value>.*)$", re.MULTILINE)
_SPACE = re.compile(r"\s+")


@dataclass
class Node:
    """One line of the ARIA snapshot."""

    role: str
    name: str = ""
    url: str = ""
    #: Text after the colon (``- paragraph: Some text``).
    text: str = ""
    level: int = 0
    children: list[Node] = field(default_factory=list)

    def label(self) -> str:
        return self.name or self.text


@dataclass(frozen=True)
class SearchResult:
    title: str
    snippet: str
    url: str

    @property
    def source(self) -> str:
        """The site, as a person would say it (``weather.example.org``)."""
        host = urlsplit(self.url).hostname or self.url
        return host.removeprefix("www.")


@dataclass(frozen=True)
class Page:
    """A snapshot: the page's address, title and nodes."""

    url: str
    title: str
    nodes: list[Node]

    def text(self, max_chars: int = 100_000) -> str:
        """The page's readable text in document order (its ``main`` part when it has one), cut at
        ``max_chars``."""
        main = [n for n in _walk(self.nodes) if n.role == "main"]
        parts = _texts(main[:1] or self.nodes)
        return _cut(" ".join(parts), max_chars)

    def is_challenge(self) -> bool:
        """Whether this is a bot check or rate-limit page rather than results."""
        return bool(CHALLENGE.search(self.title) or CHALLENGE.search(self.text(4000)))


def parse_snapshot(output: str) -> Page:
    """A ``browser_snapshot`` answer as a Page (empty when it holds no snapshot)."""
    fields = {m.group("key"): m.group("value").strip() for m in _PAGE_FIELD.finditer(output)}
    block = _YAML_BLOCK.search(output)
    nodes = parse_aria(block.group("body")) if block else []
    return Page(url=fields.get("URL", ""), title=fields.get("Title", ""), nodes=nodes)


def parse_aria(yaml_text: str) -> list[Node]:
    """The nodes of an ARIA snapshot (Playwright's YAML), as a forest."""
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    for raw in yaml_text.splitlines():
        match = _LINE.match(raw)
        if match is None:
            continue
        indent = len(match.group("indent"))
        node = _parse_item(match.group("item"))
        if node is None:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if node.role == "/url":
            if stack:
                stack[-1][1].url = node.text
            continue
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((indent, node))
    return roots


def _parse_item(item: str) -> Node | None:
    item = item.rstrip()
    if len(item) >= 2 and item[0] == item[-1] == "'":
        item = item[1:-1].replace("''", "'")  # a YAML single-quoted scalar
    elif item.startswith("'") and item.endswith("':"):
        item = item[1:-2].replace("''", "'") + ":"
    match = _NODE.match(item)
    if match is None:
        return None
    role = match.group("role")
    name = _unescape(match.group("name") or "")
    rest = match.group("rest").strip()
    text = ""
    if rest.startswith(":"):
        text = rest[1:].strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
            text = text[1:-1]
    level = 0
    if level_match := re.search(r"\[level=(\d+)\]", match.group("attrs")):
        level = int(level_match.group(1))
    return Node(role=role, name=name, text=text, level=level)


def _unescape(name: str) -> str:
    return re.sub(r"\\(.)", r"\1", name)


# --- results ------------------------------------------------------------------------------------


def extract_results(page: Page, *, limit: int = 5) -> list[SearchResult]:
    """The page's search results in order: each heading that holds a link, its snippet the text of the
    nodes after it under the same parent, up to the next such heading."""
    search_host = urlsplit(page.url).hostname or ""
    results: list[SearchResult] = []

    def visit(nodes: list[Node]) -> None:
        current: SearchResult | None = None
        snippet: list[str] = []

        def finish() -> None:
            if current is not None and len(results) < limit:
                results.append(SearchResult(current.title, _clean(" ".join(snippet)), current.url))

        for node in nodes:
            link = _result_link(node)
            if link is not None:
                finish()
                current, snippet = _result(node, link, page.url, search_host), []
            elif current is not None:
                for piece in _texts([node]):
                    if piece != current.title and not _looks_like_address(piece) and piece not in snippet:
                        snippet.append(piece)
            else:
                visit(node.children)
        finish()

    visit(page.nodes)
    return results


def _result_link(node: Node) -> Node | None:
    """The link of a result's heading (``h2 > a``), if ``node`` is one."""
    if node.role != "heading":
        return None
    return next((n for n in _walk(node.children) if n.role == "link" and n.url), None)


def _result(heading: Node, link: Node, base: str, search_host: str) -> SearchResult | None:
    target, redirected = resolve_link(link.url, base)
    if target is None or (not redirected and _same_site(target, search_host)):
        return None  # an ad through the search site, or one of its own pages
    title = _clean(link.name or heading.name or heading.text)
    return SearchResult(title, "", target) if title else None


def _texts(nodes: list[Node]) -> list[str]:
    """The readable text of nodes and their children, in document order."""
    parts = []
    for node in _walk(nodes):
        if node.role in SKIP_ROLES:
            continue
        piece = _clean(node.name if node.role in TEXT_ROLES | {"heading"} and node.name else node.text)
        if piece:
            parts.append(piece)
    return parts


def resolve_link(href: str, base: str) -> tuple[str | None, bool]:
    """The page a result link leads to (absolute; None when not http(s)), and whether it was decoded
    from a redirect link."""
    absolute = urljoin(base or "https://invalid/", href)
    parts = urlsplit(absolute)
    query = parse_qs(parts.query)
    redirected = False
    for key in REDIRECT_PARAMS:
        target = next((v for v in query.get(key, []) if v.startswith(("http://", "https://"))), None)
        if target is not None:
            absolute, parts, redirected = target, urlsplit(target), True
            break
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None, redirected
    return absolute, redirected


def format_results(query: str, results: list[SearchResult], max_chars: int, extra: str = "") -> str:
    """The results as the model reads them: numbered, each with its source, within ``max_chars``."""
    lines = [f"Web search results for {query!r}:"]
    size = len(lines[0])
    for number, result in enumerate(results, 1):
        line = f"{number}. {result.title} ({result.source}): {result.snippet}".rstrip(": ")
        if size + len(line) + 1 > max_chars:
            line = _cut(line, max_chars - size - 1)
            if len(line) < 40:
                break
        lines.append(line)
        size += len(line) + 1
    if extra and size < max_chars - 80:
        lines.append(
            _cut(
                f"From {results[0].source if results else 'the first result'}: {extra}", max_chars - size - 1
            )
        )
    return "\n".join(lines)


def _walk(nodes: list[Node]) -> list[Node]:
    out: list[Node] = []
    for node in nodes:
        out.append(node)
        out.extend(_walk(node.children))
    return out


def _same_site(url: str, search_host: str) -> bool:
    host = urlsplit(url).hostname or ""
    if not search_host:
        return False
    return _site(host) == _site(search_host)


def _site(host: str) -> str:
    """The registrable part, roughly: the last two labels (html.duckduckgo.com -> duckduckgo.com)."""
    if re.fullmatch(r"[\d.]+|\[?[0-9a-f:]+\]?", host):
        return host  # an address: the whole of it
    return ".".join(host.split(".")[-2:])


def _looks_like_address(text: str) -> bool:
    """A result's displayed address (``weather.example.org/paris``), not part of its snippet."""
    return " " not in text and ("/" in text or re.fullmatch(r"[\w-]+(?:\.[\w-]+)+", text) is not None)


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text[: max(0, max_chars - 1)]
    space = cut.rfind(" ")
    if space > max_chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"
