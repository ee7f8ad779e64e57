"""BackgroundTranscriber's decoding: deterministic, bounded, biased to the home (issue 18).

An utterance up to 30 s is decoded with CTranslate2 directly on a window of ``[stt] window_s``; longer
audio goes through faster-whisper's ``transcribe``. For the first, the real tiny.en model runs with a
spy on its CTranslate2 model (what it is asked is the contract); for the second, a stand-in for
faster-whisper's WhisperModel records the options. The real model also checks determinism and biasing
on synthesized, noisy speech.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from homeassist.audio.bias import bias_text, home_phrases
from homeassist.audio.lexicon import LEXICON_WEIGHT
from homeassist.audio.stt import MAX_TOKENS, BackgroundTranscriber, max_tokens
from homeassist.config.speech import SttSettings
from tests.audio.conftest import STT_TIME_LIMIT_S, compose, synthesize
from tests.conftest import wait_until_async

HOME: dict[str, Any] = {
    "devices": [
        {"name": "Porch Light", "area": "Porch", "aliases": ["front light"]},
        {"name": "Hallway Thermostat", "area": "Hallway"},
    ],
    "areas": ["Porch", "Hallway", "Garage"],
}


#: Longer than whisper's 30-second window: decoded by faster-whisper's ``transcribe`` (the stand-in).
LONG = np.zeros(31 * 16_000, dtype=np.int16)


class FakeModel:
    """Speaks WhisperModel.transcribe's shape: (segments, info); remembers each call's options."""

    def __init__(self, *, text: str = " Turn on the porch light.", block: threading.Event | None = None):
        self.calls: list[dict[str, Any]] = []
        self.text = text
        self.block = block
        self.entered = threading.Event()  # a transcription reached the model

    def feature_extractor(self, samples: Any) -> Any:
        self.entered.set()
        if self.block is not None:
            assert self.block.wait(30), "the test never released the model"
        return np.zeros((80, len(samples) // 160 + 1), dtype=np.float32)

    def transcribe(self, audio: Any, **options: Any) -> tuple[Iterator[Any], Any]:
        self.calls.append(options)
        segment = SimpleNamespace(text=self.text, avg_logprob=-0.2, no_speech_prob=0.1)
        return iter([segment]), SimpleNamespace(language="en")


class Spy:
    """Stands in front of the CTranslate2 Whisper model: records what encode and generate are given."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.encoded: list[tuple[int, ...]] = []
        self.generated: list[tuple[list[list[int]], dict[str, Any]]] = []

    def encode(self, features: Any, **options: Any) -> Any:
        self.encoded.append(tuple(features.shape))
        return self.inner.encode(features, **options)

    def generate(self, encoded: Any, prompts: list[list[int]], **options: Any) -> Any:
        self.generated.append((prompts, options))
        return self.inner.generate(encoded, prompts, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def transcriber(tmp_path: Path, model: FakeModel, **settings: Any) -> BackgroundTranscriber:
    stt = BackgroundTranscriber(SttSettings(**settings), language="en", state_dir=tmp_path)
    stt._model = model  # the stand-in at the library boundary
    return stt


def test_long_audio_decoding_is_greedy_at_temperature_zero_without_timestamps_and_bounded(
    tmp_path: Path,
) -> None:
    model = FakeModel()
    stt = transcriber(tmp_path, model, bias="off", beam_size=1)
    transcript = stt.transcribe_blocking(LONG)
    options = model.calls[0]
    assert options["temperature"] == 0.0  # one value: no sampling fallback
    assert options["without_timestamps"] is True
    assert options["beam_size"] == 1
    assert options["max_new_tokens"] == MAX_TOKENS
    assert options["language"] == "en"
    assert options["hotwords"] is None and options["initial_prompt"] is None
    assert transcript.text == "Turn on the porch light."
    assert transcript.confidence == pytest.approx(np.exp(-0.2) * 0.9, abs=0.001)


def test_the_transcriber_uses_every_core(tmp_path: Path) -> None:
    stt = BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path)
    assert stt.cpu_threads == (os.cpu_count() or 1)


def test_the_home_biases_recognition_and_is_rebuilt_only_when_it_changes(tmp_path: Path) -> None:
    home: dict[str, Any] = dict(HOME)
    reads: list[int] = []

    def current() -> dict[str, Any]:
        reads.append(1)
        return home

    model = FakeModel()
    stt = transcriber(tmp_path, model, bias="prompt")
    stt.home = current
    stt.transcribe_blocking(LONG)
    prompt = model.calls[0]["initial_prompt"]
    assert all(name in prompt for name in ("Porch Light", "front light", "Hallway Thermostat", "Garage"))
    assert model.calls[0]["hotwords"] is None
    first = stt.bias()
    assert stt.bias() is first  # the same home: not rebuilt
    home["devices"] = [*HOME["devices"], {"name": "Garage Door", "area": "Garage"}]
    assert "Garage Door" in stt.bias()
    assert len(reads) == 4


def test_hotwords_carry_the_names_and_the_command_words() -> None:
    hotwords = bias_text(HOME, "hotwords")
    assert hotwords.startswith("Porch Light, front light, Hallway Thermostat, Porch, Hallway, Garage")
    assert "turn on" in hotwords and "degrees" in hotwords and "twenty" in hotwords
    assert bias_text(HOME, "off") == ""
    assert bias_text(None, "prompt") == ""
    # The wake phrase is heard before many commands: it leads both kinds of biasing.
    assert bias_text(HOME, "hotwords", ["Hey Jarvis"]).startswith("Hey Jarvis, Porch Light")
    assert bias_text(HOME, "prompt", ["Hey Jarvis"]).startswith("Hey Jarvis. Home devices: Porch Light")
    assert bias_text(None, "prompt", ["Hey Jarvis"]) == "Hey Jarvis."
    assert home_phrases({"devices": [{"name": "Lamp"}, {"name": "Lamp", "area": None}]}) == ["Lamp"]


def test_a_home_that_cannot_be_read_costs_no_utterance(tmp_path: Path) -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("not connected")

    model = FakeModel()
    stt = transcriber(tmp_path, model, bias="hotwords")
    stt.home = broken
    assert stt.transcribe_blocking(LONG).text == "Turn on the porch light."
    assert model.calls[0]["hotwords"] is not None  # the command words still go


async def test_an_utterance_past_the_time_limit_is_not_understood(tmp_path: Path) -> None:
    release = threading.Event()
    model = FakeModel(block=release)
    stt = transcriber(tmp_path, model, time_limit_s=0.05)
    try:
        transcript = await stt.transcribe(np.zeros(16_000, dtype=np.int16))
    finally:
        release.set()
    assert transcript.text == "" and transcript.confidence == 0.0
    assert "stt_timeout" in transcript.timings_ms
    await stt.aclose()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundTranscriber]:
    # A loaded machine transcribes slowly: the time limit is not what these tests are about.
    stt = BackgroundTranscriber(
        SttSettings(bias="prompt", time_limit_s=STT_TIME_LIMIT_S),
        language="en",
        state_dir=tmp_path_factory.mktemp("stt"),
    )
    stt.home = lambda: HOME
    stt.transcribe_blocking(np.zeros(1600, dtype=np.int16))  # loads the model once
    yield stt


def test_the_same_noisy_clip_gives_the_same_text_every_time(
    tiny: BackgroundTranscriber, tmp_path: Path
) -> None:
    clip = compose(
        0.3, synthesize("set the thermostat to twenty two degrees", tmp_path), 0.3, noise_rms=800.0
    )
    texts = {tiny.transcribe_blocking(clip).text for _ in range(4)}
    assert len(texts) == 1 and texts != {""}


def test_the_porch_light_is_heard_with_the_home_in_the_prompt(
    tiny: BackgroundTranscriber, tmp_path: Path
) -> None:
    clip = compose(0.3, synthesize("turn on the porch light", tmp_path), 0.3)
    transcript = tiny.transcribe_blocking(clip)
    assert "porch light" in transcript.text.lower()
    assert transcript.confidence > 0.5


def test_a_short_utterance_is_decoded_on_a_window_of_window_s(
    tiny: BackgroundTranscriber, tmp_path: Path
) -> None:
    clip = compose(0.3, synthesize("turn on the porch light", tmp_path), 0.3)
    model = tiny._model.model
    spy = tiny._model.model = Spy(model)
    try:
        transcript = tiny.transcribe_blocking(clip)
    finally:
        tiny._model.model = model
    assert "porch light" in transcript.text.lower()
    assert spy.encoded == [(1, 80, round(tiny.settings.window_s * 100))]  # 20 s, not whisper's 30
    ((prompt,), options) = spy.generated[0]
    tokenizer = tiny._tokenizer
    assert prompt[-1] == tokenizer.no_timestamps and tokenizer.sot in prompt
    assert "Porch Light" in tokenizer.decode(prompt[: prompt.index(tokenizer.sot)])  # the home's names
    # A beam of [stt] beam_size, never sampling: the same audio gives the same text.
    assert options["beam_size"] == tiny.settings.beam_size == 5 and "sampling_temperature" not in options
    assert options["max_length"] - len(prompt) == max_tokens(len(clip) / 16_000) < MAX_TOKENS
    assert options["return_no_speech_prob"] is True
    assert options["num_hypotheses"] == 5  # every hypothesis of the beam, to choose among (lexicon.py)


class Hypotheses(Spy):
    """Answers generate with the given hypotheses (text, score per token), as CTranslate2 would."""

    def __init__(self, inner: Any, tokenizer: Any, hypotheses: list[tuple[str, float]]) -> None:
        super().__init__(inner)
        self.ids = [tokenizer.encode(text) for text, _ in hypotheses]
        # CTranslate2's score is the sum over the tokens divided by their number (length penalty 1).
        self.scores = [score for _, score in hypotheses]

    def generate(self, encoded: Any, prompts: list[list[int]], **options: Any) -> Any:
        self.generated.append((prompts, options))
        return [SimpleNamespace(sequences_ids=self.ids, scores=self.scores, no_speech_prob=0.01)]


def test_the_hypothesis_made_of_request_words_is_kept_with_its_own_confidence(
    tiny: BackgroundTranscriber, tmp_path: Path
) -> None:
    clip = compose(0.3, synthesize("make the kitchen light brighter", tmp_path), 0.3)
    model = tiny._model.model
    tiny._model.model = Hypotheses(
        model,
        tiny._tokenizer,
        [(" Make the Porch Light Rider.", -0.26), (" Make the porch light brighter.", -0.4)],
    )
    try:
        transcript = tiny.transcribe_blocking(clip)
        tiny.lexicon_weight = 0.0  # whisper's own first
        first = tiny.transcribe_blocking(clip)
    finally:
        tiny._model.model = model
        tiny.lexicon_weight = LEXICON_WEIGHT
    assert transcript.text == "Make the porch light brighter."
    assert first.text == "Make the Porch Light Rider."
    # The confidence is the chosen words': lower than whisper's first, never borrowed from it.
    assert transcript.confidence < first.confidence


def test_an_utterance_longer_than_the_window_gets_its_own_length(
    tiny: BackgroundTranscriber, tmp_path: Path
) -> None:
    speech = synthesize("turn on the porch light", tmp_path)
    clip = compose(*[part for _ in range(10) for part in (speech, 1.2)])  # about 24 s
    model = tiny._model.model
    spy = tiny._model.model = Spy(model)
    try:
        tiny.transcribe_blocking(clip)
    finally:
        tiny._model.model = model
    frames = spy.encoded[0][2]
    assert tiny.settings.window_s * 100 < frames <= 3000 and frames >= len(clip) // 160
    assert frames % 2 == 0  # the encoder's convolution halves it


async def test_a_transcription_no_longer_wanted_before_it_began_never_runs(tmp_path: Path) -> None:
    release = threading.Event()
    model = FakeModel(block=release)
    stt = transcriber(tmp_path, model, time_limit_s=60)
    first = asyncio.create_task(stt.transcribe(LONG))
    assert await asyncio.to_thread(model.entered.wait, 30)  # the first holds the worker
    second = asyncio.create_task(stt.transcribe(LONG))
    # The second is queued behind it (the executor's own queue: nothing public tells).
    await wait_until_async(lambda: stt._worker._work_queue.qsize() == 1, 30, "the second queued")
    second.cancel()
    # The caller has given it up (its task is done) while it is still queued behind the first; only
    # then may the worker go on, whenever the executor's own cancellation reaches its queue.
    with pytest.raises(asyncio.CancelledError):
        await second
    release.set()
    assert (await first).text == "Turn on the porch light."
    # One more, behind the second in the worker's queue: when it is done, the second ran or never will.
    assert (await stt.transcribe(LONG)).text == "Turn on the porch light."
    await stt.aclose()
    assert len(model.calls) == 2  # the first and the last: the worker never spent time on the second


def test_a_command_with_a_close_rival_the_other_way_falls_under_the_command_gate(
    tiny: BackgroundTranscriber, tmp_path: Path
) -> None:
    clip = compose(0.3, synthesize("turn on the porch light", tmp_path), 0.3)
    model = tiny._model.model
    try:
        tiny._model.model = Hypotheses(
            model,
            tiny._tokenizer,
            [(" Turn on the porch light.", -0.1), (" Turn off the porch light.", -0.11)],
        )
        doubtful = tiny.transcribe_blocking(clip)
        tiny._model.model = Hypotheses(
            model,
            tiny._tokenizer,
            [(" Turn on the porch light.", -0.1), (" Turn on the porch lights.", -0.11)],
        )
        sure = tiny.transcribe_blocking(clip)
    finally:
        tiny._model.model = model
    assert doubtful.text == sure.text == "Turn on the porch light."
    assert sure.confidence >= tiny.settings.min_command_confidence > doubtful.confidence
