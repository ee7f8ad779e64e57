"""What is said to the assistant, not asked of it: a greeting, thanks, good night, goodbye.

``pleasantry(norm)`` is the short reply ("Good night!", "You're welcome."), said locally: a model shown
the device tools for "good night" invented a "good night" tool four times and then said "I don't
know." (Qwen2.5-Coder-0.5B, issue 34), and no answer is needed from it. Only the whole request counts,
in the classifier's normalised text (lower case, "please" and "can you" gone): "good night" and
"thanks, that's all" do; "good night, turn off the lights", "thanks for nothing, what time is it" and
"say good night to the kids" do not, and go on as any other request. Pure.
"""

from __future__ import annotations

import re

#: Who may be named after the words ("thanks jarvis", "good morning assistant").
_TO = r"(?:,? (?:jarvis|alexa|assistant|computer|mate|buddy|homeassist))?"
#: "thanks, that's all", "thank you, that's it": the end of a conversation.
_DONE = r"(?:,? (?:that'?s|that is) (?:all|it|everything)(?: for now)?)?"

_REPLIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^(?:good ?night|night night|nighty night|nite)(?: then)?{_TO}$"), "Good night!"),
    (re.compile(rf"^good morning{_TO}$"), "Good morning!"),
    (re.compile(rf"^good afternoon{_TO}$"), "Good afternoon!"),
    (re.compile(rf"^good evening{_TO}$"), "Good evening!"),
    (re.compile(rf"^(?:hi|hello|hey|hiya|hey there|hi there|hello there){_TO}$"), "Hello!"),
    (
        re.compile(
            r"^(?:thanks|thank you|thank you very much|thanks a lot|thanks so much|many thanks|cheers|ta)"
            rf"{_TO}{_DONE}$"
        ),
        "You're welcome.",
    ),
    (
        re.compile(
            rf"^(?:(?:that'?s|that is) (?:all|it)(?: for now)?|all done)(?:,? thanks?(?: you)?)?{_TO}$"
        ),
        "Okay.",
    ),
    (re.compile(rf"^(?:bye|goodbye|good bye|bye bye|see you|see you later|see ya){_TO}$"), "Goodbye!"),
)


def pleasantry(norm: str) -> str | None:
    """The reply to a greeting, thanks or goodbye said alone, else None."""
    text = norm.strip(" .!?")
    return next((reply for pattern, reply in _REPLIES if pattern.match(text)), None)
