"""One stop vocabulary (``homeassist.vocabulary``) for its two uses: the voice loop stops talking on a
stop phrase said alone; a ringing timer ends on a stop phrase or an acknowledgement, also at the start
of something longer. Everything either accepted before they were one is still accepted."""

from __future__ import annotations

import pytest

from homeassist.vocabulary import dismisses, says_stop

#: What the voice loop stopped on before (its own list).
STOPS = ["stop", "Stop.", "cancel", "never mind", "nevermind", "be quiet", "quiet!", "shut up", "  enough "]
#: What a ringing timer was dismissed with before (its own list), besides those.
ACKNOWLEDGED = ["ok", "okay", "Okay, thanks", "dismiss", "thanks", "thank you", "stop the timer", "quiet now"]
#: Requests, not stops.
REQUESTS = ["stop the fan", "cancel my pasta timer", "thanks", "okay", "what time is it", "stopwatch"]


@pytest.mark.parametrize("said", STOPS)
def test_a_stop_phrase_alone_stops_and_dismisses(said: str) -> None:
    assert says_stop(said) and dismisses(said)


@pytest.mark.parametrize("said", ACKNOWLEDGED)
def test_an_acknowledgement_dismisses_a_ringing_timer(said: str) -> None:
    assert dismisses(said)


@pytest.mark.parametrize("said", REQUESTS)
def test_a_request_is_not_a_stop(said: str) -> None:
    assert not says_stop(said)


@pytest.mark.parametrize("said", ["what time is it", "stopwatch", "turn on the light", "oklahoma"])
def test_other_words_do_not_dismiss(said: str) -> None:
    assert not dismisses(said)
