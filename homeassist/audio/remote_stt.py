"""RemoteTranscriber: speech to text on another machine, a Wyoming ``asr`` service at ``[stt] uri``.

A drop-in for :class:`~homeassist.audio.stt.BackgroundTranscriber` (both are a
:class:`~homeassist.audio.stt.SpeechTranscriber`): the voice loop, the satellites and the Wyoming ``asr``
service hand it 16 kHz mono int16 utterances and get a :class:`~homeassist.messages.Transcript`. No speech
model is loaded in this process. Typically the service is ``wyoming-faster-whisper`` on a machine with a GPU
(``tcp://gpu-box:10300``); homeassist's own ``[wyoming]`` service on another home server works too.

Per utterance, one connection (``wyoming.client.AsyncTcpClient``): ``transcribe`` (with ``[assistant]
language``), ``audio-start``, ``audio-chunk``s of ``CHUNK_SAMPLES``, ``audio-stop``; then events are read
until ``transcript`` (or ``error``). One connection an utterance, not a kept one: wyoming-faster-whisper 3.8.1
ends the connection after each ``audio-stop``, so a kept one would have to be reopened anyway; the voice loop
cancels a transcription begun at a pause when the speech goes on, and a cancelled exchange must leave nothing
half-read on a stream the next one shares; and a connection on a LAN costs about a millisecond. Overlapping
calls use separate connections.

Bounds: connecting takes at most ``connect_timeout_s`` (``CONNECT_TIMEOUT_S``); the whole exchange (connect,
audio out, transcript back) at most ``[stt] time_limit_s``; closing ``CLOSE_S``. A service that cannot be
reached, is too slow, answers an ``error`` or speaks something other than Wyoming makes ``transcribe`` raise a
:class:`RemoteSttError` (an :class:`~homeassist.errors.AudioError`): its ``spoken`` is one short sentence for
the person, its message names the uri and the fix for the log. The voice loop says the sentence and goes on
listening; nothing stops the daemon. Each call tries the service afresh, so it is used again as soon as it is
back.

``load()`` checks reachability once (``describe`` -> ``info`` with an ``asr`` program) and never raises: a
service that is down at start is logged as a WARNING with the fix, and speech is tried on it per utterance.
``loaded`` is True from construction: there is no model here to load, so audio may always be handed over (the
Wyoming ``asr`` service of this daemon then relays to the remote one instead of loading a faster-whisper model
of its own). Whether the service answered last is ``reachable`` and ``last_error``.

Confidence: a Wyoming ``transcript`` carries none, and beam scores never leave the service. The gate
(``Assistant.refuse_unheard``) and acting at a pause (``Assistant.acts_at_pause``) read
``Transcript.confidence``, which the local model lowers for exactly the mis-hearings that matter (an unsure
beam, "turn off" close behind "turn on"). A remote transcript could be any of those, so it gets ``[stt]
min_confidence``: enough to answer a question, tell the time or set a timer, never more. With the default
``min_command_confidence`` (0.6, above ``min_confidence``'s 0.5) a device command heard through the service is
answered "Sorry, I didn't catch that." and never acts, on the local path or at a pause: an unknown confidence
never lets a device act on a mis-hearing more easily than the local model would. An owner who trusts the
service (a larger model on a GPU mis-hears less) sets ``[stt] min_command_confidence`` to ``min_confidence``
or below; ``load`` logs this once.

Biasing: the protocol's ``transcribe`` has ``language`` (sent) and ``name`` (a model of the service's; not
sent: ``[stt] model`` names the model this machine would load, not one the service has, and
wyoming-faster-whisper 3.8.1 ignores the field). It has no prompt: ``context`` means "context from previous
interactions" and wyoming-faster-whisper ignores it too, so the wake phrase and the home's names cannot be
sent per utterance. The service takes them at its start (wyoming-faster-whisper: ``--initial-prompt``); the
prompt homeassist would use is logged at INFO when the home changes, to copy there. The service's own beam
size, model and filters apply; the text it returns is stripped, and one of only silence words ("you", "thank
you") becomes empty, as the local model's would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt
from wyoming.asr import Transcribe
from wyoming.asr import Transcript as WyomingTranscript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info

from homeassist.audio.bias import Home, bias_text, home_phrases
from homeassist.audio.stt import SAMPLE_RATE, without_filler
from homeassist.config.speech import SttSettings
from homeassist.errors import RemoteSttError
from homeassist.messages import Transcript

_LOGGER = logging.getLogger(__name__)

#: Connecting to the service takes at most this long (a LAN answers in milliseconds; a host that is off
#: drops the packets and would otherwise hold the utterance for the system's TCP timeout).
CONNECT_TIMEOUT_S = 3.0
#: ``load``'s reachability check (``describe`` -> ``info``) takes at most this long after connecting.
DESCRIBE_TIMEOUT_S = 5.0
#: Closing a connection waits at most this long (a peer that stopped reading cannot hold it).
CLOSE_S = 1.0
#: Samples per ``audio-chunk`` (64 ms, as Home Assistant and wyoming-satellite send them).
CHUNK_SAMPLES = 1024
WIDTH, CHANNELS = 2, 1


class RemoteSttUnreachable(RemoteSttError):
    """No connection to the service (refused, no route, unknown host, or no answer in time)."""


class RemoteSttTimeout(RemoteSttError):
    """Connected, but no transcript within ``[stt] time_limit_s``."""

    spoken = "The speech recognizer took too long."


@dataclass(frozen=True)
class Reached:
    """What ``describe`` told of the service: its asr programs and their models' languages."""

    programs: tuple[str, ...]
    languages: frozenset[str]


class RemoteTranscriber:
    """``await load()`` once (a reachability check that never raises), then ``await transcribe(audio)``
    per utterance; calls may overlap. ``aclose`` has nothing to release (connections are per call)."""

    def __init__(
        self,
        settings: SttSettings,
        *,
        language: str,
        uri: str | None = None,
        home: Callable[[], Home | None] | None = None,
        wake_phrases: Sequence[str] = (),
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        self.settings = settings
        #: The service: ``[stt] uri`` unless given.
        self.uri = uri or settings.uri
        parts = urlsplit(self.uri)
        if parts.scheme != "tcp" or not parts.hostname or not parts.port:
            raise RemoteSttError(
                f"[stt] uri = {self.uri!r} is not a tcp://HOST:PORT URI (e.g. 'tcp://gpu-box:10300')"
            )
        self.host, self.port = parts.hostname, parts.port
        self.language = language
        self.connect_timeout_s = connect_timeout_s
        #: The home whose names would bias recognition (the daemon sets it); see the module docstring.
        self.home = home
        #: The wake phrases said before a command ("Hey Jarvis"): part of the suggested prompt.
        self.wake_phrases = tuple(wake_phrases)
        #: How long ``load``'s reachability check took (ms); 0 before it ran.
        self.load_ms = 0.0
        #: Whether the service answered the last check or transcription; None before either.
        self.reachable: bool | None = None
        #: The last failure's message (uri and fix), for a status line; None after a success.
        self.last_error: str | None = None
        #: What ``describe`` said of the service (``load``); None when it was not reached.
        self.service: Reached | None = None
        self._checked = False
        self._home_key: str | None = None

    @property
    def loaded(self) -> bool:
        """Always True: nothing is loaded here, audio may always be handed over (see the module
        docstring); ``reachable`` says whether the service answered."""
        return True

    @property
    def confidence(self) -> float:
        """The confidence every transcript from the service carries (see the module docstring)."""
        return self.settings.min_confidence

    async def load(self) -> None:
        """Check once that the service answers ``describe`` with an asr program; a failure is logged
        (WARNING, with the fix) and speech is still tried on the service per utterance."""
        if self._checked:
            return
        self._checked = True
        if self.settings.min_command_confidence > self.settings.min_confidence:
            _LOGGER.info(
                "A Wyoming asr service sends no confidence: device commands heard through it are asked "
                "again, never acted on, while [stt] min_command_confidence (%g) is above "
                "min_confidence (%g); set it to %g to trust the service with them",
                self.settings.min_command_confidence,
                self.settings.min_confidence,
                self.settings.min_confidence,
            )
        start = time.perf_counter()
        try:
            self.service = await self.check()
        except RemoteSttError as err:
            _LOGGER.warning("Speech to text: %s; speech will be tried on it per utterance", err)
            return
        finally:
            self.load_ms = (time.perf_counter() - start) * 1000
        languages = self.service.languages
        _LOGGER.info(
            "Speech to text on the Wyoming asr service at %s (%s) in %.0f ms",
            self.uri,
            ", ".join(self.service.programs),
            self.load_ms,
        )
        if languages and self.language not in languages:
            _LOGGER.warning(
                "The Wyoming asr service at %s lists languages %s, not [assistant] language = %r; "
                "start it with a model for %r",
                self.uri,
                ", ".join(sorted(languages)),
                self.language,
                self.language,
            )

    @contextlib.contextmanager
    def _failures(self, timed_out: str) -> Iterator[None]:
        """Every way an exchange fails, as one RemoteSttError (``timed_out``: the timeout's message),
        recorded (``_failed``: ``reachable``, ``last_error``)."""
        try:
            yield
        except TimeoutError as err:
            raise self._failed(RemoteSttTimeout(timed_out)) from err
        except RemoteSttError as err:
            raise self._failed(err) from err
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise self._failed(self._broken(err)) from err

    async def check(self) -> Reached:
        """``describe`` -> ``info``, bounded; RemoteSttError when the service is not a reachable asr."""
        timed_out = (
            f"the Wyoming asr service at [stt] uri = {self.uri!r} did not answer describe within "
            f"{DESCRIBE_TIMEOUT_S:g} s; check that it is a Wyoming service and not stuck (its log)"
        )
        with self._failures(timed_out):
            async with asyncio.timeout(self.connect_timeout_s + DESCRIBE_TIMEOUT_S):
                client = await self._connect()
                try:
                    await client.write_event(Describe().event())
                    event = await self._next(client, Info.is_type, "info")
                    info = Info.from_event(event)
                finally:
                    await _close(client)
        programs = tuple(p.name for p in info.asr if p.installed) or tuple(p.name for p in info.asr)
        if not programs:
            raise self._failed(
                RemoteSttError(
                    f"the Wyoming service at [stt] uri = {self.uri!r} serves no asr (speech to text); "
                    "point [stt] uri at a speech-to-text service such as wyoming-faster-whisper"
                )
            )
        languages = frozenset(lang for p in info.asr for m in p.models for lang in m.languages)
        self._succeeded()
        return Reached(programs, languages)

    async def words_heard(self, audio: npt.NDArray[np.int16]) -> str:
        """What ``audio`` says, as the service hears it (it is sent no prompt per utterance anyway)."""
        return (await self.transcribe(audio, source="wake check")).text

    async def hears(self, audio: npt.NDArray[np.int16], expecting: str) -> Transcript:
        """What ``audio`` says, as the service hears it: it is sent no prompt (``expecting`` biases
        nothing), and its confidence is the service's, where it gives one."""
        return await self.transcribe(audio, source="over the reply")

    async def transcribe(self, audio: npt.NDArray[np.int16], *, source: str = "microphone") -> Transcript:
        """The text of one utterance (an empty Transcript when nothing real was said); RemoteSttError
        when the service gives none within ``[stt] time_limit_s``."""
        self._suggest_prompt()
        start = time.perf_counter()
        connected = start
        timed_out = (
            f"the Wyoming asr service at [stt] uri = {self.uri!r} sent no transcript within [stt] "
            f"time_limit_s = {self.settings.time_limit_s:g} s; it may be overloaded or stuck "
            "(check its log), or raise [stt] time_limit_s"
        )
        with self._failures(timed_out):
            async with asyncio.timeout(self.settings.time_limit_s):
                client = await self._connect()
                connected = time.perf_counter()
                try:
                    await self._send(client, audio)
                    event = await self._next(
                        client, WyomingTranscript.is_type, "transcript", fail_on=Error.is_type
                    )
                    heard = WyomingTranscript.from_event(event)
                finally:
                    await _close(client)
        if not isinstance(heard.text, str):
            raise self._failed(
                self._broken(TypeError(f"its transcript's text is {type(heard.text).__name__}"))
            )
        self._succeeded()
        text = without_filler(" ".join(heard.text.split()))  # the local model's list: one place
        elapsed = (time.perf_counter() - start) * 1000
        duration = len(audio) / SAMPLE_RATE
        return Transcript(
            text=text,
            language=heard.language if isinstance(heard.language, str) and heard.language else self.language,
            confidence=self.confidence if text else 0.0,
            source=source,
            timings_ms={
                "audio": round(duration * 1000, 1),
                "stt": round(elapsed, 1),
                "stt_connect": round((connected - start) * 1000, 1),
                "rtf": round(elapsed / 1000 / duration, 3) if duration else 0.0,
            },
        )

    def transcribe_blocking(self, audio: npt.NDArray[np.int16], *, source: str = "file") -> Transcript:
        """The same, for callers without an event loop (the CLI's ``transcribe``)."""
        return asyncio.run(self.transcribe(audio, source=source))

    async def aclose(self) -> None:
        """Nothing to release: each transcription closes its own connection, even when cancelled."""

    # --- the exchange -------------------------------------------------------------------------------

    async def _connect(self) -> AsyncTcpClient:
        client = AsyncTcpClient(self.host, self.port)
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                await client.connect()
        except OSError as err:  # a TimeoutError too
            service = f"the Wyoming asr service at [stt] uri = {self.uri!r}"
            if isinstance(err, TimeoutError):
                why = f"no connection to {service} within {self.connect_timeout_s:g} s"
            else:
                why = f"cannot connect to {service} ({err.strerror or err})"
            raise RemoteSttUnreachable(f"{why}; {self._fix()}") from err
        return client

    async def _send(self, client: AsyncTcpClient, audio: npt.NDArray[np.int16]) -> None:
        data = np.ascontiguousarray(audio, dtype="<i2").tobytes()
        step = CHUNK_SAMPLES * WIDTH
        await client.write_event(Transcribe(language=self.language).event())
        await client.write_event(AudioStart(rate=SAMPLE_RATE, width=WIDTH, channels=CHANNELS).event())
        for at in range(0, len(data), step):
            chunk = AudioChunk(rate=SAMPLE_RATE, width=WIDTH, channels=CHANNELS, audio=data[at : at + step])
            await client.write_event(chunk.event())
        await client.write_event(AudioStop().event())

    async def _next(
        self,
        client: AsyncTcpClient,
        wanted: Callable[[str], bool],
        name: str,
        *,
        fail_on: Callable[[str], bool] = Error.is_type,
    ) -> Event:
        """Events until one ``wanted`` (others, such as ``transcript-start``, are skipped); bounded by
        the caller's timeout."""
        while True:
            event = await client.read_event()
            if event is None:
                raise RemoteSttError(
                    f"the service at [stt] uri = {self.uri!r} closed the connection, or sent what is not "
                    f"a Wyoming event, before its {name}; check that it is a Wyoming asr service such as "
                    "wyoming-faster-whisper (its log says why)"
                )
            if wanted(event.type):
                return event
            if fail_on(event.type):
                error = Error.from_event(event)
                raise RemoteSttError(
                    f"the Wyoming asr service at [stt] uri = {self.uri!r} answered with an error "
                    f"({error.code or 'no code'}: {error.text}); its log says more"
                )
            _LOGGER.debug("Wyoming asr at %s: skipped a %r event", self.uri, event.type)

    def _broken(self, err: Exception) -> RemoteSttError:
        return RemoteSttError(
            f"the exchange with the Wyoming asr service at [stt] uri = {self.uri!r} failed "
            f"({type(err).__name__}: {err}); check that it is a Wyoming asr service such as "
            "wyoming-faster-whisper, and its log"
        )

    def _fix(self) -> str:
        return (
            "start the Wyoming asr service there (e.g. wyoming-faster-whisper --uri "
            f"tcp://0.0.0.0:{self.port}), check the host, port and firewall, or set [stt] uri = '' to "
            "transcribe on this machine"
        )

    def _failed(self, err: RemoteSttError) -> RemoteSttError:
        self.reachable = not isinstance(err, RemoteSttUnreachable)
        self.last_error = str(err)
        return err

    def _succeeded(self) -> None:
        self.reachable, self.last_error = True, None

    def _suggest_prompt(self) -> None:
        """Log, when the home changed, the prompt the service could be started with (see the module
        docstring): the protocol carries none per utterance."""
        try:
            home = self.home() if self.home is not None else None
        except Exception:  # a home that cannot be read now must not cost the utterance
            _LOGGER.exception("Could not read the home for speech biasing")
            return
        key = repr((home_phrases(home), self.wake_phrases))
        if key == self._home_key:
            return
        self._home_key = key
        prompt = bias_text(home, "prompt", self.wake_phrases) if self.settings.bias != "off" else ""
        if prompt:
            _LOGGER.info(
                "The Wyoming protocol carries no prompt: to bias the asr service at %s to this home, "
                "start it with --initial-prompt %r (wyoming-faster-whisper)",
                self.uri,
                prompt,
            )


async def _close(client: AsyncTcpClient) -> None:
    """Close, bounded; never raises (the exchange's own outcome is what counts)."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(CLOSE_S):
            await client.disconnect()
