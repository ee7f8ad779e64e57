"""Which answers send a request to the web search."""

from __future__ import annotations

import pytest

from homeassist.web.triggers import needs_search, says_it_does_not_know


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "I don't know.",
        "I do not know who won the game last night.",
        "I'm not sure about that.",
        "I don't have real-time information about the weather.",
        "I do not have access to current data.",
        "As of my last knowledge update in 2023, the price was about $30.",
        "My knowledge cutoff is October 2023, so I can't say.",
        "I can't browse the internet, but ...",
        "I'm unable to provide real-time stock prices.",
        "Please check a weather website for the forecast.",
    ],
)
def test_answers_that_do_not_know_trigger_a_search(answer: str) -> None:
    assert says_it_does_not_know(answer)
    assert needs_search("general", answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Hamlet was written by William Shakespeare.",
        "Paris is the capital of France.",
        "I know a good joke about that: ...",
        "The kitchen light is on.",
    ],
)
def test_answers_that_know_do_not(answer: str) -> None:
    assert not says_it_does_not_know(answer)
    assert not needs_search("general", answer)


def test_web_requests_always_search_and_other_kinds_never() -> None:
    assert needs_search("web", None) and needs_search("web", "It is sunny.")
    assert not needs_search("general", None)
    assert not needs_search("device", "I don't know.") and not needs_search("timer", "")
