"""When a request goes to the web: an intent of kind ``web``, or a ``general`` answer that says the
model does not know or has no current information. A short list of patterns, each tested."""

from __future__ import annotations

import re

from homeassist.messages import IntentKind

#: What small models say when they do not know, or know that their knowledge is old.
DONT_KNOW: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"^\s*i (?:really )?(?:don'?t|do not) know\b",
        r"\bi'?m not sure\b",
        r"\bi (?:don'?t|do not) have (?:access to )?(?:any )?(?:real[- ]time|current|up[- ]to[- ]date|live|"
        r"recent) (?:information|data|news|updates|access)\b",
        r"\b(?:as of|since) my (?:last )?(?:knowledge|training)(?: cut-?off| update)?\b",
        r"\bmy (?:knowledge|training)(?: data)? (?:cut-?off|only goes)\b",
        r"\bi(?: can'?t| cannot| am unable to|'m unable to) (?:browse|access|search) the (?:internet|web)\b",
        r"\bi(?: can'?t| cannot| am unable to|'m unable to) (?:provide|give|check) (?:you )?(?:real[- ]time|"
        r"current|live|the latest|up[- ]to[- ]date)\b",
        r"\b(?:check|consult|visit) (?:a |the )?(?:weather|news) (?:website|service|app)\b",
    )
)


def says_it_does_not_know(answer: str) -> bool:
    return not answer.strip() or any(pattern.search(answer) for pattern in DONT_KNOW)


def needs_search(kind: IntentKind, answer: str | None) -> bool:
    """Whether to search: every ``web`` request; a ``general`` one whose answer is empty or says the
    model does not know (``answer`` None: not asked yet)."""
    if kind == "web":
        return True
    return kind == "general" and answer is not None and says_it_does_not_know(answer)
