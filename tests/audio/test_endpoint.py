"""Endpointer: Silero VAD on synthesized speech, where each test knows to the sample where speech is."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import cast

import numpy as np
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, SAMPLE_RATE, AudioFrame, WavSource, to_frames
from homeassist.audio.endpoint import Endpointer, Event, NothingHeard, SileroVad, SpeechStarted, Utterance

from .conftest import Clips, Recording, Samples, compose, seconds

FRAME_S = FRAME_SAMPLES / SAMPLE_RATE
TOLERANCE_S = 0.15


def feed_all(
    endpointer: Endpointer, audio: Samples, *, start_at_frame: int | None = 0, look_back: bool = False
) -> list[tuple[int, Event]]:
    """Feed ``audio`` frame by frame (frame n ends at n * 80 ms); start() before frame ``start_at_frame``."""
    events: list[tuple[int, Event]] = []
    for number, samples in enumerate(to_frames(audio)):
        if number == start_at_frame:
            endpointer.start(look_back=look_back)
        event = endpointer.feed(AudioFrame(samples, (number + 1) * FRAME_S))
        if event is not None:
            events.append((number, event))
    return events


def locate(part: Samples, whole: Samples) -> int:
    """Where ``part`` lies in ``whole`` (it must be an exact slice)."""
    for offset in np.flatnonzero(whole == part[0]):
        if np.array_equal(whole[offset : offset + len(part)], part):
            return int(offset)
    raise AssertionError("not a slice of the recording")


async def test_speech_then_silence_is_one_utterance_ending_at_the_end_of_speech(
    wavs: dict[str, Recording],
) -> None:
    wav = wavs["command"]
    endpointer = Endpointer(trailing_silence_ms=700, preroll_ms=300)
    source = WavSource(wav.path)  # as fast as we take the frames; times follow the audio clock
    events: list[tuple[float, Event]] = []
    iterator = source.frames()
    first_at: float | None = None
    endpointer.start()
    async for frame in iterator:
        first_at = frame.at - FRAME_S if first_at is None else first_at
        event = endpointer.feed(frame)
        if event is not None:
            events.append((frame.at - first_at, event))
    await cast(AsyncGenerator[AudioFrame, None], iterator).aclose()
    assert first_at is not None

    assert [type(event) for _, event in events] == [SpeechStarted, Utterance]
    onset, end = wav.speech_start / SAMPLE_RATE, wav.speech_end / SAMPLE_RATE
    started = cast(SpeechStarted, events[0][1])
    emitted_at, utterance = events[1][0], cast(Utterance, events[1][1])
    assert started.at - first_at == pytest.approx(onset, abs=TOLERANCE_S)
    assert utterance.ended_by == "silence"
    assert utterance.started_at == started.at
    print(
        f"speech end: true {end:.3f} s, detected {utterance.speech_end_at - first_at:.3f} s; "
        f"utterance returned {emitted_at - end:.3f} s after the end of speech"
    )
    assert utterance.speech_end_at - first_at == pytest.approx(end, abs=TOLERANCE_S)
    # Returned once the trailing silence has passed, not much later.
    assert emitted_at - end == pytest.approx(0.7, abs=TOLERANCE_S + FRAME_S)
    # The audio is the recording itself, from before the onset (the preroll) through the end of speech.
    first = locate(utterance.audio, wav.audio)
    assert wav.speech_start - seconds(0.3 + TOLERANCE_S) <= first <= wav.speech_start - seconds(0.1)
    assert first + len(utterance.audio) >= wav.speech_end
    assert utterance.audio.dtype == np.int16


def test_a_monologue_longer_than_max_utterance_is_cut(clips: Clips) -> None:
    # Sentences with short pauses (much shorter than the trailing silence) between them.
    parts: list[Samples | float] = [1.0]
    for sentence in clips.sentences:
        parts += [sentence, 0.2]
    audio = compose(*parts, 1.0, seed=21)
    assert len(audio) / SAMPLE_RATE > 8.0
    endpointer = Endpointer(max_utterance_s=5.0, preroll_ms=300, trailing_silence_ms=700)
    events = feed_all(endpointer, audio)
    kinds = [type(event) for _, event in events]
    assert kinds[:2] == [SpeechStarted, Utterance]
    utterance = cast(Utterance, events[1][1])
    assert utterance.ended_by == "max_length"
    assert utterance.speech_end_at - utterance.started_at == pytest.approx(5.0, abs=0.05)
    assert utterance.duration_s == pytest.approx(5.3, abs=0.05)  # the preroll and the 5 s
    assert utterance.started_at == pytest.approx(1.0, abs=TOLERANCE_S)
    assert not endpointer.active
    assert kinds[2:] == []  # idle until start() again


@pytest.mark.parametrize("name", ["silence", "noise"])
def test_no_speech_is_nothing_heard_after_the_timeout(wavs: dict[str, Recording], name: str) -> None:
    endpointer = Endpointer(no_speech_timeout_s=2.0)
    events = feed_all(endpointer, wavs[name].audio)
    assert len(events) == 1
    _, event = events[0]
    assert isinstance(event, NothingHeard)
    assert event.at == pytest.approx(2.0, abs=FRAME_S)
    assert not endpointer.active


def test_the_preroll_reaches_back_before_start(clips: Clips) -> None:
    """Speech that begins as start() is called (right after a wake word) keeps its first syllable."""
    audio = compose(1.04, clips.command, 1.0, seed=22)
    endpointer = Endpointer(preroll_ms=300)
    start_frame = int(1.04 / FRAME_S) + 1  # start() when 40 ms of speech have already gone by
    events = feed_all(endpointer, audio, start_at_frame=start_frame)
    utterance = next(event for _, event in events if isinstance(event, Utterance))
    first = locate(utterance.audio, audio)
    assert first < seconds(1.04)  # from before the speech onset, although start() came later
    assert first >= start_frame * FRAME_SAMPLES - seconds(0.3 + 2 * 512 / SAMPLE_RATE)


@pytest.mark.parametrize("look_back", [True, False])
def test_a_late_wake_word_looks_back_to_the_wake_phrase_at_fast_speech(clips: Clips, look_back: bool) -> None:
    """The detector fires well into the command (fast speech): looking back, the utterance still starts
    before the wake phrase, so the command's first word is whole; without, that word is cut."""
    audio = compose(1.0, clips.wake_command, 1.0, seed=31)
    phrase_end = seconds(1.0) + len(clips.wake_phrase)
    start_frame = int((phrase_end + seconds(0.6)) / FRAME_SAMPLES)  # 0.6 s late: into the command
    endpointer = Endpointer(preroll_ms=300, lookback_ms=1500)
    events = feed_all(endpointer, audio, start_at_frame=start_frame, look_back=look_back)
    utterances = [event for _, event in events if isinstance(event, Utterance)]
    assert len(utterances) == 1
    first = locate(utterances[0].audio, audio)
    assert first + len(utterances[0].audio) >= seconds(1.0) + len(clips.wake_command)
    if look_back:
        assert first <= seconds(1.0)  # the wake phrase and what follows it, whole
    else:
        assert first > phrase_end  # the old cut: the command's first word lost


def test_a_wake_phrase_then_a_pause_is_not_taken_for_the_command(clips: Clips) -> None:
    """Looking back finds the wake phrase; when it ended before the firing, the command still to come
    is the utterance (the phrase alone never ends it)."""
    audio = compose(1.0, clips.wake_phrase, 1.2, clips.command, 1.0, seed=32)
    phrase_end = seconds(1.0) + len(clips.wake_phrase)
    command_start = phrase_end + seconds(1.2)
    start_frame = int((phrase_end + seconds(0.3)) / FRAME_SAMPLES) + 1
    endpointer = Endpointer(preroll_ms=300, lookback_ms=1500, trailing_silence_ms=700)
    events = feed_all(endpointer, audio, start_at_frame=start_frame, look_back=True)
    utterances = [event for _, event in events if isinstance(event, Utterance)]
    assert len(utterances) == 1
    first = locate(utterances[0].audio, audio)
    assert command_start - seconds(0.3 + TOLERANCE_S) <= first <= command_start
    assert first + len(utterances[0].audio) >= command_start + len(clips.command)


def test_audio_from_before_a_gap_in_the_frames_is_never_preroll(clips: Clips) -> None:
    """Frames not fed (while the speaker played, say) leave no stale audio in front of new speech."""
    endpointer = Endpointer(preroll_ms=300)
    for number, samples in enumerate(to_frames(compose(clips.question, seed=25))):
        endpointer.feed(AudioFrame(samples, (number + 1) * FRAME_S))  # idle; ends at about 3 s
    audio = compose(0.1, clips.command, 1.0, seed=26)  # speech 100 ms in: less than the preroll
    endpointer.start()
    events = [
        endpointer.feed(AudioFrame(samples, 10.0 + n * FRAME_S)) for n, samples in enumerate(to_frames(audio))
    ]
    utterance = next(event for event in events if isinstance(event, Utterance))
    assert locate(utterance.audio, audio) == 0  # begins at the first new sample, not before


def test_an_idle_endpointer_runs_no_model_and_reports_nothing(clips: Clips) -> None:
    endpointer = Endpointer()
    events = feed_all(endpointer, compose(0.5, clips.command, 1.0, seed=23), start_at_frame=None)
    assert events == []
    assert not endpointer.active


def test_two_utterances_in_a_row_each_need_a_start(clips: Clips) -> None:
    audio = compose(0.5, clips.command, 1.0, clips.command, 1.0, seed=24)
    endpointer = Endpointer()
    events: list[Event] = []
    for number, samples in enumerate(to_frames(audio)):
        if not endpointer.active:
            endpointer.start()  # always-listening mode: start again after each event
        event = endpointer.feed(AudioFrame(samples, (number + 1) * FRAME_S))
        if event is not None:
            events.append(event)
    utterances = [event for event in events if isinstance(event, Utterance)]
    assert [u.ended_by for u in utterances] == ["silence", "silence"]
    second_onset = (seconds(0.5) + len(clips.command) + seconds(1.0)) / SAMPLE_RATE
    assert utterances[1].started_at == pytest.approx(second_onset, abs=TOLERANCE_S)


def test_streaming_vad_matches_faster_whispers_batch_vad(wavs: dict[str, Recording]) -> None:
    """80 ms frames, cut into 512-sample windows with the state carried over, score as the whole file does."""
    from faster_whisper.vad import get_vad_model

    audio = wavs["question"].audio
    usable = len(audio) // 512 * 512
    batch = np.asarray(get_vad_model()(audio[:usable].astype(np.float32) / 32768.0)).reshape(-1)
    vad = SileroVad()
    streamed = np.concatenate([vad(samples) for samples in to_frames(audio[:usable])])[: len(batch)]
    # faster-whisper zeroes the last 64 samples of its last window (a side effect of how it builds the
    # contexts), so the last window is left out of the comparison.
    assert np.allclose(streamed[:-1], batch[:-1], atol=1e-4)
    assert streamed.max() > 0.9 and streamed[:20].max() < 0.1  # speech, after a second of quiet


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="lookback_ms"):
        Endpointer(lookback_ms=-1)
    with pytest.raises(ValueError):
        Endpointer(trailing_silence_ms=0)
    with pytest.raises(ValueError):
        Endpointer(threshold=1.5)


def test_an_utterance_cut_in_a_pause_is_the_one_the_silence_would_have_ended(clips: Clips) -> None:
    audio = compose(0.5, clips.command, 2.0, seed=12)
    speech_end_s = (seconds(0.5) + len(clips.command)) / SAMPLE_RATE
    whole = Endpointer(trailing_silence_ms=700, preroll_ms=300)
    ended = [e for _, e in feed_all(whole, audio) if isinstance(e, Utterance)]
    assert len(ended) == 1 and ended[0].ended_by == "silence"

    endpointer = Endpointer(trailing_silence_ms=700, preroll_ms=300)
    with pytest.raises(RuntimeError):
        endpointer.cut()  # nothing heard yet: nothing to cut
    endpointer.start()
    cut: Utterance | None = None
    for number, samples in enumerate(to_frames(audio)):
        assert endpointer.feed(AudioFrame(samples, (number + 1) * FRAME_S)) is None or cut is None
        if cut is None and endpointer.in_speech and endpointer.pause_s >= 0.2:
            cut = endpointer.cut()
            assert not endpointer.active  # idle until the next start()
    assert cut is not None and cut.ended_by == "pause"
    # The same speech, ended at the same place; only less of the pause after it is kept.
    assert cut.speech_end_at == pytest.approx(ended[0].speech_end_at)
    assert abs(cut.speech_end_at - speech_end_s) < TOLERANCE_S
    assert cut.started_at == pytest.approx(ended[0].started_at)
    assert 0 < len(ended[0].audio) - len(cut.audio) <= seconds(0.3)
    assert np.array_equal(cut.audio, ended[0].audio[: len(cut.audio)])


def test_a_short_pause_after_the_wake_phrase_keeps_the_phrase_out_of_the_command(clips: Clips) -> None:
    """After "hey jarvis," and the comma's short pause: the command's audio starts after the
    phrase, even where its preroll would reach back into it (a syllable of "jarvis" in front of the
    command made whisper hear "Just turn on ..." and lowered the confidence the gate reads)."""
    gap = 0.25  # longer than the phrase gap the endpointer needs, shorter than the 300 ms preroll
    audio = compose(1.0, clips.wake_phrase, gap, clips.command, 1.0, seed=33)
    phrase_end = seconds(1.0) + len(clips.wake_phrase)
    command_start = phrase_end + seconds(gap)
    start_frame = int((command_start + seconds(0.3)) / FRAME_SAMPLES) + 1  # the wake word fires late
    endpointer = Endpointer(preroll_ms=300, lookback_ms=1500, trailing_silence_ms=700)
    events = feed_all(endpointer, audio, start_at_frame=start_frame, look_back=True)
    utterances = [event for _, event in events if isinstance(event, Utterance)]
    assert len(utterances) == 1
    first = locate(utterances[0].audio, audio)
    assert phrase_end <= first <= command_start
    assert first + len(utterances[0].audio) >= command_start + len(clips.command)
