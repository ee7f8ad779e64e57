"""One rooted exception hierarchy for the whole package.

Third-party errors are wrapped with ``raise ... from err``. Every error carries a ``spoken`` sentence:
the short thing a person hears; the message (``str(err)``) is the detail that goes to the log.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable


class HomeassistError(Exception):
    """Base of every error homeassist raises on purpose."""

    #: What the user hears when this error ends a request. Subclasses or instances refine it.
    spoken: str = "Sorry, something went wrong."

    def __init__(self, message: str, *, spoken: str | None = None) -> None:
        super().__init__(message)
        if spoken is not None:
            self.spoken = spoken


class ConfigError(HomeassistError):
    """The configuration could not be read or is invalid. The message names file, key and value."""

    spoken = "My configuration is invalid; please check the log."


class ModelError(HomeassistError):
    """The language model could not produce an answer. Never an empty answer in disguise."""

    spoken = "The language model failed, so I can't answer that right now."


class ModelUnreachableError(ModelError):
    """The model server could not be reached at its URL."""


class ModelNotConfiguredError(ModelError):
    """No usable model client is configured."""


class ModelNotFoundError(ModelError):
    """The server answers but does not have the model (not pulled)."""

    spoken = "The language model isn't installed yet, so I can't answer that right now."


class ModelTimeoutError(ModelError):
    """The model server did not answer within ``[ollama] timeout_s``."""

    spoken = "The language model took too long, so I gave up on that."


class ModelResponseError(ModelError):
    """The model server failed mid-answer: an error line, a dropped stream, a truncated answer."""

    spoken = "The language model stopped in the middle of its answer; please try again."


class ZWaveError(HomeassistError):
    """A Z-Wave request failed: no connection, an unknown device, a refused command."""

    spoken = "I couldn't reach the Z-Wave network."


class ZWaveUnavailableError(ZWaveError):
    """The Z-Wave JS server is not connected (it is down, starting, or reconnecting)."""

    spoken = "The Z-Wave network isn't available right now."


class DeviceNotFoundError(ZWaveError):
    """No device matches a name; the message lists what exists."""

    spoken = "I don't know that device."


class AmbiguousDeviceError(ZWaveError):
    """Several devices match a name; the message lists the candidates."""

    spoken = "More than one device matches that."


class MCPError(HomeassistError):
    """An MCP server could not be started or stopped answering; the message names it and what to do."""

    spoken = "A service I need for that isn't working right now; please try again."


class WebSearchError(HomeassistError):
    """A web search failed: the browser or the search page could not be used; the message says why."""

    spoken = "I couldn't search the web just now."


class WebSearchTimeout(WebSearchError):
    """A web search ran past ``[web] budget_s``."""

    spoken = "The web search took too long, so I gave up."


class WebSearchBlocked(WebSearchError):
    """The search site answered with a bot check or a rate limit instead of results."""

    spoken = "The search site wants to check that I'm not a robot, so I couldn't read the results."


class QueueFullError(HomeassistError):
    """Too many requests are waiting (the daemon's request queue is full)."""

    spoken = "I'm busy right now; please ask again in a moment."

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        #: When to ask again (the control API's Retry-After).
        self.retry_after_s = retry_after_s


class ShuttingDownError(HomeassistError):
    """homeassist is stopping and takes no more requests."""

    spoken = "I'm shutting down, so I can't do that now."


class AudioError(HomeassistError):
    """The microphone or the speaker cannot be used; the message says which and what to do."""

    spoken = "I can't use the microphone right now."


class DaemonNotRunningError(HomeassistError):
    """No daemon answers at the control API's address."""


class LogSourceError(HomeassistError):
    """A source could not be read: the statistics, or journalctl failed. The message says which."""


class RouterModelError(HomeassistError):
    """The shipped routing model is missing or damaged (reinstall homeassist)."""


class SchedulerError(HomeassistError):
    """A timer request that cannot be done (no such timer, a time in the past, not running)."""

    spoken = "I couldn't do that with the timers."


class SchedulerUnavailableError(SchedulerError):
    """The scheduler is not running in this daemon (starting, stopped, or its job file unusable)."""

    spoken = "Timers aren't available right now."


class StoreDamagedError(SchedulerError):
    """The job file is damaged (not a database, malformed): set it aside, start a new one."""


class NotReadyError(SchedulerError):
    """``on_fire``: a part the job needs is not up yet (Z-Wave still connecting), so nothing was done.

    ``ready(timeout_s)``, when given, returns once the part is up (or after ``timeout_s``): the next try
    comes then. ``spoken`` is the reason a person hears if the job's grace runs out first."""

    spoken = "a part it needs was not available"

    def __init__(
        self,
        message: str,
        *,
        spoken: str | None = None,
        ready: Callable[[float], Awaitable[object]] | None = None,
    ) -> None:
        super().__init__(message, spoken=spoken)
        self.ready = ready


class WakeWordError(AudioError):
    """The wake-word models could not be found or loaded."""

    spoken = "My wake word detector is not available."


class SpeakerError(AudioError):
    """Speech could not be synthesized or played."""

    spoken = ""


class VadError(AudioError):
    """The voice-activity model could not be found or loaded."""

    spoken = "My speech detector is not available."


class RemoteSttError(AudioError):
    """The Wyoming asr service at ``[stt] uri`` gave no transcript; the message names it and the fix."""

    spoken = "I can't reach the speech recognizer."


class AudioDeviceError(AudioError):
    """No usable audio input: PortAudio is missing, the device is unknown, or the stream failed."""

    spoken = "I can't use the microphone."


class AudioFormatError(AudioError):
    """A file is not a WAV file this reader understands (the message says what it found)."""

    spoken = "I can't read that audio file."


class SttModelError(AudioError):
    """The speech-to-text model is missing, damaged, or does not fit the language."""

    spoken = "My speech recognition model is not available."


class EsphomeError(HomeassistError):
    """An ESPHome device could not be used."""


class WyomingError(HomeassistError):
    """The Wyoming services cannot run (their address cannot be listened on); the message says why."""

    spoken = "The Wyoming services for Home Assistant are not running; please check the log."


class SatelliteError(WyomingError):
    """A satellite cannot be reached or stopped listening; the message says which and why."""

    spoken = "I can't reach that satellite."


def kinds_of(base: type[BaseException]) -> frozenset[str]:
    """The names of ``base`` and of every class under it: the ``Reply.error_kind`` values that mean an
    error of that family (a reply carries its error's kind as a name, so that it travels as JSON)."""
    names: set[str] = set()
    todo = [base]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return frozenset(names)
