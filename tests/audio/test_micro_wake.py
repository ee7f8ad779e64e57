"""MicroWakeDetector: microWakeWord's shipped models on real recordings (../shared/voice) and resets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, AudioFrame, read_wav, to_frames
from homeassist.audio.micro_wake import SETTLE_S, MicroWakeDetector, shipped_words
from homeassist.audio.wake import WakeWordDetector
from homeassist.audio.wake_engine import WakeDetector, build_detector
from homeassist.config.speech import ENGINE_WORDS, WakeSettings

pytestmark = pytest.mark.timeout(120)

VOICE = Path(__file__).resolve().parents[3] / "shared" / "voice"
needs_voice = pytest.mark.skipif(
    not (VOICE / "wake").is_dir(), reason=f"no real recordings at {VOICE} (../shared is absent)"
)
Samples = np.ndarray


def padded(audio: Samples, before_s: float = 1.5, after_s: float = 1.0, seed: int = 0) -> Samples:
    """A recording between stretches of quiet room noise, as a microphone hears it after silence."""
    rng = np.random.default_rng(seed)
    whole = np.concatenate([np.zeros(round(before_s * 16000)), audio, np.zeros(round(after_s * 16000))])
    whole = whole + rng.normal(0.0, 30.0, len(whole))
    return np.clip(np.round(whole), -32768, 32767).astype(np.int16)


def fired(detector: WakeDetector, audio: Samples) -> list[tuple[str, float]]:
    """(word, seconds into the audio) of each firing."""
    found = []
    for number, samples in enumerate(to_frames(audio), start=1):
        word = detector.process(AudioFrame(samples, number * FRAME_SECONDS))
        if word is not None:
            found.append((word, number * FRAME_SECONDS))
    return found


def test_the_package_ships_the_words_the_settings_name() -> None:
    assert set(shipped_words()) == set(ENGINE_WORDS["micro"])


@needs_voice
@pytest.mark.parametrize("word", ["hey_jarvis", "okay_nabu", "alexa"])
def test_a_real_recording_of_the_word_wakes_it_once_after_it_is_said(word: str) -> None:
    audio = read_wav(VOICE / "wake" / f"{word}.wav")
    detector = MicroWakeDetector([word])
    found = fired(detector, padded(audio))
    assert [w for w, _ in found] == [word]
    assert 1.5 < found[0][1] <= 1.5 + len(audio) / 16000 + 0.5  # while or just after it is said


@needs_voice
def test_several_words_tell_which_was_said_and_no_other_fires() -> None:
    detector = MicroWakeDetector(["okay_nabu", "hey_jarvis", "alexa"])
    assert [w for w, _ in fired(detector, padded(read_wav(VOICE / "wake" / "okay_nabu.wav")))] == [
        "okay_nabu"
    ]
    assert set(detector.scores) == {"okay_nabu", "hey_jarvis", "alexa"}


@needs_voice
def test_a_reset_forgets_what_was_heard_and_scores_nothing_while_it_settles() -> None:
    """The same audio after a reset scores as it does on a fresh detector, whatever came before, and
    nothing scores while the features settle (no score is made from state from before the reset)."""
    audio = padded(read_wav(VOICE / "wake" / "hey_jarvis.wav"))
    fresh, used = MicroWakeDetector(["hey_jarvis"]), MicroWakeDetector(["hey_jarvis"])
    fired(used, padded(read_wav(VOICE / "wake" / "alexa.wav")))
    used.reset()
    for samples in to_frames(audio):
        fresh.process(AudioFrame(samples, 0.0))
        used.process(AudioFrame(samples, 0.0))
        assert used.scores == fresh.scores
    settled = MicroWakeDetector(["hey_jarvis"])
    scores = []
    for samples in to_frames(audio[: round(SETTLE_S * 16000)]):
        settled.process(AudioFrame(samples, 0.0))
        scores.append(settled.scores["hey_jarvis"])
    assert scores == [0.0] * len(scores)


@needs_voice
def test_the_cutoff_is_the_models_own_unless_a_threshold_is_set() -> None:
    detector = MicroWakeDetector(["hey_jarvis", "alexa"])
    assert detector.threshold is None and detector.cutoffs == {"hey_jarvis": 0.97, "alexa": 0.9}
    detector.threshold = 0.999999  # a reload's new [wake] threshold reaches it
    assert fired(detector, padded(read_wav(VOICE / "wake" / "hey_jarvis.wav"))) == []
    detector.threshold = None
    detector.reset()
    assert [w for w, _ in fired(detector, padded(read_wav(VOICE / "wake" / "hey_jarvis.wav")))] == [
        "hey_jarvis"
    ]


def test_an_unknown_word_and_a_bad_frame_are_refused() -> None:
    with pytest.raises(ValueError, match="hey_rhasspy"):
        MicroWakeDetector(["hey_rhasspy"])
    with pytest.raises(ValueError, match=str(FRAME_SAMPLES)):
        MicroWakeDetector(["alexa"]).process(AudioFrame(np.zeros(10, np.int16), 0.0))


def test_the_settings_choose_the_engine() -> None:
    assert isinstance(build_detector(WakeSettings()), MicroWakeDetector)  # hey_jarvis: micro has it
    assert isinstance(build_detector(WakeSettings(words=["hey_rhasspy"])), WakeWordDetector)
    assert isinstance(build_detector(WakeSettings(engine="openwakeword")), WakeWordDetector)
    assert not build_detector(WakeSettings(words=[])).enabled
    with pytest.raises(ValueError, match="no model of 'hey_rhasspy'"):
        WakeSettings(engine="micro", words=["hey_rhasspy"])


def test_a_shared_detector_keeps_its_own_state() -> None:
    one = MicroWakeDetector(["alexa"], refractory_s=3.0)
    other = one.sharing()
    assert (other.words, other.refractory_s, other.threshold) == (one.words, 3.0, None)
    loud = np.random.default_rng(1).normal(0, 3000, 20 * FRAME_SAMPLES).astype(np.int16)
    fired(one, loud)
    assert other.scores == {}
