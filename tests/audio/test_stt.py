"""BackgroundTranscriber and its models: real faster-whisper models on synthesized speech."""

from __future__ import annotations

import subprocess
import wave
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio import models
from homeassist.audio.models import resolve_model, sha256
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.config.speech import SttSettings
from homeassist.errors import SttModelError
from tests.audio.conftest import STT_TIME_LIMIT_S


def speech(text: str, directory: Path) -> npt.NDArray[np.int16]:
    """``text`` spoken by espeak-ng, as 16 kHz mono int16."""
    raw, out = directory / "raw.wav", directory / "speech.wav"
    subprocess.run(["espeak-ng", "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(out)], check=True)
    with wave.open(str(out)) as handle:
        return np.frombuffer(handle.readframes(handle.getnframes()), dtype=np.int16).copy()


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundTranscriber]:
    state = tmp_path_factory.mktemp("stt-state")
    transcriber = BackgroundTranscriber(
        SttSettings(time_limit_s=STT_TIME_LIMIT_S), language="en", state_dir=state
    )
    transcriber.transcribe_blocking(np.zeros(1600, dtype=np.int16))  # loads the model once
    yield transcriber


def test_a_spoken_command_is_transcribed_with_timings(tiny: BackgroundTranscriber, tmp_path: Path) -> None:
    transcript = tiny.transcribe_blocking(speech("turn on the kitchen light", tmp_path))
    assert "kitchen light" in transcript.text.lower()
    assert transcript.language == "en" and 0 < transcript.confidence <= 1
    assert transcript.timings_ms["audio"] > 500 and transcript.timings_ms["stt"] > 0
    assert transcript.timings_ms["rtf"] == pytest.approx(
        transcript.timings_ms["stt"] / transcript.timings_ms["audio"], abs=0.01
    )


def test_silence_and_noise_give_no_text(tiny: BackgroundTranscriber) -> None:
    assert tiny.transcribe_blocking(np.zeros(16000 * 2, dtype=np.int16)).text == ""
    noise = np.random.default_rng(7).normal(0, 600, 16000 * 2).astype(np.int16)
    assert tiny.transcribe_blocking(noise).text == ""


async def test_transcription_runs_off_the_event_loop(tiny: BackgroundTranscriber, tmp_path: Path) -> None:
    import asyncio

    audio = speech("what time is it", tmp_path)
    transcribing = asyncio.create_task(tiny.transcribe(audio))
    turns = 0
    while not transcribing.done():  # the loop runs this while the model works in its thread
        turns += 1
        await asyncio.sleep(0.005)
    transcript = await transcribing
    assert "time" in transcript.text.lower()
    # Inference on the loop would finish within the task's first step or two.
    assert turns >= 5


def test_an_english_only_model_with_another_language_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SttModelError, match=r"\[stt\] model = 'tiny.en' understands only English.*'de'"):
        BackgroundTranscriber(SttSettings(model="tiny.en"), language="de", state_dir=tmp_path)
    BackgroundTranscriber(SttSettings(model="base"), language="de", state_dir=tmp_path)  # multilingual


def test_a_changed_model_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tiny = models.PACKAGED["tiny.en"]
    files = dict(tiny.files)
    package, inner, _ = files["config.json"]
    files["config.json"] = (package, inner, "0" * 64)
    monkeypatch.setitem(models.PACKAGED, "tiny.en", models.Packaged("tiny.en", True, files))
    with pytest.raises(SttModelError, match=r"config.json has SHA-256 [0-9a-f]{64}, expected 0{64}"):
        resolve_model("tiny.en", tmp_path)


def test_the_split_base_model_is_joined_once_and_checked(tmp_path: Path) -> None:
    where = Path(resolve_model("base", tmp_path))
    assert where == tmp_path / "stt-models" / "base"
    joined = where / "model.bin"
    assert sha256(joined) == models.PACKAGED["base"].joined[2]  # type: ignore[index]
    first = joined.stat().st_mtime_ns
    assert Path(resolve_model("base", tmp_path)) == where and joined.stat().st_mtime_ns == first
    joined.write_bytes(b"damaged")
    resolve_model("base", tmp_path)  # joined again from the packages
    assert sha256(joined) == models.PACKAGED["base"].joined[2]  # type: ignore[index]


def test_a_model_path_must_be_a_ctranslate2_directory(tmp_path: Path) -> None:
    with pytest.raises(SttModelError, match="not a CTranslate2 model directory"):
        resolve_model(str(tmp_path), tmp_path)
    assert resolve_model("small.en", tmp_path) == "small.en"  # a name faster-whisper downloads
