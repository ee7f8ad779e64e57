"""Reading search pages from recorded ``browser_snapshot`` answers (tests/fixtures/web, recorded from
the real Playwright MCP server and Chromium on the pages in standins/pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from homeassist.web.results import (
    extract_results,
    format_results,
    parse_aria,
    parse_snapshot,
    resolve_link,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "web"


def snapshot(name: str) -> str:
    return (FIXTURES / f"{name}.snapshot.md").read_text(encoding="utf-8")


def test_duckduckgo_results_skip_the_ad_and_decode_redirect_links() -> None:
    page = parse_snapshot(snapshot("results"))
    assert page.url == "http://127.0.0.1:8080/html/?q=weather+in+paris+today"
    assert page.title == "weather in paris today at DuckDuckGo"
    results = extract_results(page)
    assert [(r.title, r.url, r.source) for r in results] == [
        (
            "Paris, France Weather Today | Weather Example",
            "http://127.0.0.1:8080/article/paris",
            "127.0.0.1",
        ),
        ("Paris - Wikipedia", "https://en.wikipedia.org/wiki/Paris", "en.wikipedia.org"),
    ]
    # The snippet is the result's own text: not its displayed address, not the "Next Page" link.
    assert results[0].snippet == (
        "Today in Paris: light rain in the morning, high of 14 °C, low of 8 °C, wind 20 km/h from the west."
    )
    assert results[1].snippet == "Paris is the capital of France."
    assert not page.is_challenge()


def test_no_results_and_a_bot_check() -> None:
    empty = parse_snapshot(snapshot("no-results"))
    assert extract_results(empty) == []
    assert not empty.is_challenge()
    challenge = parse_snapshot(snapshot("challenge"))
    assert challenge.is_challenge()
    assert extract_results(challenge) == []


def test_an_article_reads_as_its_main_text() -> None:
    page = parse_snapshot(snapshot("article"))
    text = page.text()
    assert text.startswith("Paris, France Today: light rain in the morning")
    assert "Home" not in text  # navigation is not the article
    assert "Sunny, high 17 °C." in text
    cut = page.text(60)
    assert len(cut) <= 60 and cut.endswith("…")


def test_searxng_markup_reads_the_same_way() -> None:
    # SearXNG's simple theme: article.result > h3 > a, then p.content.
    nodes = parse_aria(
        """- main [ref=e1]:
  - article [ref=e2]:
    - link "en.wikipedia.org › wiki › Kiwi" [ref=e3]:
      - /url: https://en.wikipedia.org/wiki/Kiwi_(bird)
    - heading "Kiwi (bird) - Wikipedia" [level=3] [ref=e4]:
      - link "Kiwi (bird) - Wikipedia" [ref=e5]:
        - /url: https://en.wikipedia.org/wiki/Kiwi_(bird)
    - paragraph [ref=e6]: Kiwi are flightless birds endemic to New Zealand.
    - generic [ref=e7]: wikipedia
  - article [ref=e8]:
    - heading "Kiwi - Britannica" [level=3] [ref=e9]:
      - link "Kiwi - Britannica" [ref=e10]:
        - /url: https://www.britannica.com/animal/kiwi
    - paragraph [ref=e11]: "Kiwi, any of five species of flightless birds: small, nocturnal."
"""
    )
    from homeassist.web.results import Page

    results = extract_results(Page("http://searx.lan:8888/search?q=kiwi", "kiwi - SearXNG", nodes))
    assert [(r.title, r.snippet, r.source) for r in results] == [
        (
            "Kiwi (bird) - Wikipedia",
            "Kiwi are flightless birds endemic to New Zealand. wikipedia",
            "en.wikipedia.org",
        ),
        (
            "Kiwi - Britannica",
            "Kiwi, any of five species of flightless birds: small, nocturnal.",
            "britannica.com",
        ),
    ]


def test_quoted_names_and_escapes_are_read() -> None:
    nodes = parse_aria(
        """- 'link "It''s \\"quoted\\": yes" [ref=e1]':
  - /url: https://example.org/a
- paragraph [ref=e2]: 'text: with a colon'
"""
    )
    assert nodes[0].role == "link" and nodes[0].url == "https://example.org/a"
    assert nodes[0].name == 'It\'s "quoted": yes'
    assert nodes[1].text == "text: with a colon"


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("/l/?uddg=https%3A%2F%2Fexample.org%2Fa%3Fb%3D1&rut=x", ("https://example.org/a?b=1", True)),
        ("https://www.google.com/url?q=https://example.org/&sa=U", ("https://example.org/", True)),
        ("https://example.org/page", ("https://example.org/page", False)),
        ("/y.js?ad_domain=ads.example", ("https://search.example/y.js?ad_domain=ads.example", False)),
        ("javascript:alert(1)", (None, False)),
        ("mailto:someone@example.org", (None, False)),
    ],
)
def test_links_resolve_to_where_they_lead(href: str, expected: tuple[str | None, bool]) -> None:
    assert resolve_link(href, "https://search.example/html/?q=x") == expected


def test_results_for_the_model_stay_within_the_character_budget() -> None:
    results = extract_results(parse_snapshot(snapshot("results")))
    full = format_results("weather in paris today", results, 2000)
    assert full.splitlines() == [
        "Web search results for 'weather in paris today':",
        "1. Paris, France Weather Today | Weather Example (127.0.0.1): Today in Paris: light rain in the "
        "morning, high of 14 °C, low of 8 °C, wind 20 km/h from the west.",
        "2. Paris - Wikipedia (en.wikipedia.org): Paris is the capital of France.",
    ]
    short = format_results("weather in paris today", results, 160)
    assert len(short) <= 160
    assert short.splitlines()[1].startswith("1. Paris, France Weather Today")
    with_page = format_results("weather in paris today", results, 2000, "High 14 °C.")
    assert with_page.endswith("From 127.0.0.1: High 14 °C.")
