"""Choosing among whisper's hypotheses by the words people say to the home (``homeassist.audio.lexicon``).

The choice is pure and tested on its own; ``test_stt_decoding`` checks that the transcriber asks the
model for every hypothesis of its beam and keeps the chosen one with its own confidence.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from homeassist.audio.lexicon import (
    LEXICON_WEIGHT,
    Hypothesis,
    choose,
    direction_agreement,
    known_words,
    request_words,
    unknown_share,
)

REPO = Path(__file__).resolve().parents[2]
KNOWN = known_words(["Kitchen Light", "Porch Light", "Hey Jarvis"])


def test_the_packaged_lexicon_holds_request_words_and_not_sound_alikes() -> None:
    words = request_words()
    assert {"cancel", "weather", "remind", "brighter", "timer", "percent", "turn", "bedroom"} <= words
    assert not {"rider", "blindest", "vermostat"} & words
    assert {"kitchen", "light", "porch", "jarvis"} <= KNOWN  # the home's names and the wake phrase


def test_numbers_count_as_known_and_an_empty_text_has_no_unknown_words() -> None:
    assert unknown_share("Set it to 20%.", KNOWN) == 0.0
    assert unknown_share("", KNOWN) == 0.0
    assert unknown_share("Make the Kitchen Light Rider.", KNOWN) == pytest.approx(1 / 5)


def test_a_close_second_made_of_request_words_wins_over_a_sound_alike() -> None:
    hypotheses = [
        Hypothesis(" Make the Kitchen Light Rider.", -0.26),
        Hypothesis(" Make the kitchen light brighter.", -0.4),
    ]
    assert choose(hypotheses, KNOWN) == 1


def test_whisper_first_stays_when_the_others_are_no_better_known_or_far_less_likely() -> None:
    # Both made of known words: the acoustic score decides, so "off" never becomes "on" here.
    on_off = [Hypothesis(" Turn off the porch light.", -0.3), Hypothesis(" Turn on the porch light.", -0.31)]
    assert choose(on_off, KNOWN) == 0
    # A known-word hypothesis much less likely than whisper's first is not taken.
    far = [Hypothesis(" Who wrote War and Peace?", -0.4), Hypothesis(" Turn on the Kitchen Light.", -2.5)]
    assert choose(far, KNOWN) == 0
    assert choose(far[:1], KNOWN) == 0
    assert (
        choose(
            [Hypothesis(" Make the Kitchen Light Rider.", -0.26), Hypothesis(" Make it brighter.", -0.3)],
            KNOWN,
            weight=0,
        )
        == 0
    )


def test_the_weight_is_the_one_measured() -> None:
    assert LEXICON_WEIGHT == 1.0  # lexicon.py's docstring has the figures behind it; change both together


def test_the_lexicon_is_built_from_words_in_enough_utterances_the_same_every_run(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import build_lexicon  # type: ignore[import-not-found]  # a script, not a package
    finally:
        sys.path.remove(str(REPO / "scripts"))
    texts = ["turn on the lamp"] * 5 + ["the the the zebra"] + ["Cancel my timer"] * 4
    assert build_lexicon.lexicon(texts, min_rows=5) == ["lamp", "on", "the", "turn"]  # rows, not words
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    outputs = []
    for name in ("a.txt", "b.txt"):
        assert build_lexicon.main(["--data", str(data), "--out", str(tmp_path / name)]) == 0
        outputs.append((tmp_path / name).read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1] and outputs[0].splitlines()[-4:] == ["lamp", "on", "the", "turn"]


def test_a_close_rival_the_other_way_halves_the_agreement_and_a_distant_one_barely_moves_it() -> None:
    close = [
        Hypothesis(" Turn on the porch light.", -0.30, 8),
        Hypothesis(" Turn off the porch light.", -0.31, 8),
    ]
    assert direction_agreement(close, 0) == pytest.approx(1 / (1 + math.exp(-0.08)))
    assert 0.45 < direction_agreement(close, 0) < 0.55
    far = [Hypothesis(" Unlock the front door.", -0.2, 6), Hypothesis(" Lock the front door.", -1.2, 6)]
    assert direction_agreement(far, 0) > 0.99
    # Other differences are not about the direction: no rival.
    other = [
        Hypothesis(" Turn on the porch light.", -0.3, 8),
        Hypothesis(" Turn on the porch lights.", -0.3, 8),
    ]
    assert direction_agreement(other, 0) == 1.0
    two_words = [
        Hypothesis(" Turn on the porch light.", -0.3, 8),
        Hypothesis(" Turn off the kitchen light.", -0.3, 8),
    ]
    assert direction_agreement(two_words, 0) == 1.0
    assert direction_agreement(close[:1], 0) == 1.0
