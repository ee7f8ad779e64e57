"""ESPHome voice satellites (issue 28), part of ``scripts/bench/satellites``: emulated Voice PE devices
(the test suite's ``standins/esphome/emulator.py``, through ``harness.doubles``; the ESPHome native API on
127.0.0.1) heard by the daemon's own ``run_satellite`` in this process, beside the local microphone.

The devices run in a process of their own (``esphome_devices.py``, asked over its stdin), so their
microphones' pacing, their fetching of replies and their side of the protocol cost that process, not
this one; it is reported apart. Here, as the daemon builds them: ``SatelliteParts`` from the Wyoming
bench's ``Home`` (the real ``Assistant`` on the simulated home, one request queue, one transcriber, one
``SharedWake``) with ``media=`` one ``MediaListener("127.0.0.1")`` and ``arbiter=`` one ``Arbiter``,
shared by every device and by the local microphone's loop (its hooks with the arbiter). Each device
has ``SatelliteSettings(uri="esphome://127.0.0.1:PORT", room="")``: its room is the area it reports.

1. End of speech -> action, p50/p95, with 1, 2 and 4 devices speaking at once (Kitchen, Bedroom, Living
   Room, Hallway; each toggles its room's light), and the local microphone on the same commands,
   interleaved round by round with the one device. A device runs its own wake word, so what it streams
   is what follows it: ``LEAD_S`` of the room's noise (the pause after "hey jarvis"), the command
   (espeak-ng, silence trimmed, the same noise floor mixed in) and ``TAIL_S`` of noise, in 1024-byte
   chunks at real pace until the daemon ends the listening. End of speech is defined as for the local
   microphone: the capture time of the command's last speech sample. A chunk goes out once its last
   sample is captured, and the emulator paces chunk k ``k * CHUNK_S`` after its first; so with the
   first chunk's send time as origin (noted by the device process) sample i was captured at
   ``origin - CHUNK_S + (i + 1) / 16000``. The chunk holding the last sample went out up to 32 ms after
   that; "mic late" is how late that chunk went out against its schedule. Action and the split (heard,
   stt, queue, assistant) as in the Wyoming bench. Then action -> first reply audio fetched: the
   device's first byte of its reply's URL (the WAV header and the first sentence's audio are written
   into the stream in one step, after that sentence is synthesized); "fetch asked" is when the device
   got ``tts_start_streaming`` and asked for the URL.

2. Shared utterances: two devices in the Kitchen hear the same command, one at level 1.0 and one at 0.3;
   the second device's own wake word fires 0, 0.1, 0.25 or 0.4 s after the first's (each streams the
   whole command from its wake), every offset with either device the louder. Counted per utterance:
   requests handled and replies played on either device (one expected), whether the louder device
   answered, how far apart the daemon's claims were and the levels it compared (over the span both
   devices heard, from the last wake on); the decision comes once the window (``arbiter.WINDOW_S``
   from the first wake) is over and the last to wake has heard ``arbiter.HEAR_S``. Last,
   ``OVER_WINDOW_RUNS`` utterances with the second wake 0.8 s later, past the window: two utterances
   to the arbiter, so both answer. That is reported, not failed.

3. Idle: CPU of this process over the idle window (a share of one core) with no device connected (the
   media listener started) and with 4 connected and idle; the device process apart. RSS (VmRSS) of this
   process at the end of each window: the increment per device.

Checks: one device's p50 within ``TARGET_DIFF_S`` of the local microphone's; first reply audio within
``TARGET_REPLY_S`` of the action (p50); no double answer in the shared-utterance runs. Run:
``scripts/bench/satellites --quick [--esphome-only] [--shared N]``.
The tables go to stdout (``satellites_esphome_report``), every figure to ``--json``; past runs' figures
and findings are in ``scripts/bench/results/satellites.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import satellites_common as wy
from esphome_devices import Devices
from harness.daemon_parts import LOCAL_SOURCE, Home
from harness.doubles import CHUNK_BYTES, CHUNK_S
from harness.figures import figures
from harness.processes import proc_status, track, untrack
from harness.recorders import Recorder
from harness.speech import Samples

from homeassist.audio.arbiter import LOOKBACK_S, WINDOW_S, Arbiter, Claim
from homeassist.audio.capture import SAMPLE_RATE
from homeassist.audio.pipeline import VoiceLoop
from homeassist.config.satellites import SatelliteSettings
from homeassist.daemon.satellites import Satellite, SatelliteParts, run_satellite
from homeassist.daemon.supervisor import Component
from homeassist.esphome.media import MediaListener

TARGET_DIFF_S = 0.2
TARGET_REPLY_S = 0.3
LEAD_S = 0.2
TAIL_S = 2.0
#: Digital silence after the clip, should the daemon never end the listening (it does at TAIL_S's start).
TRAILING_SILENCE_S = 3.0
LEVELS = (1.0, 0.3)
#: The second device's wake after the first's: up to the few hundred ms two detectors differ by.
SHARED_OFFSETS_S = (0.0, 0.1, 0.25, 0.4)
OVER_WINDOW_S = 0.8
OVER_WINDOW_RUNS = 2
#: The Kitchen's second device, for the shared utterances.
KITCHEN_B = "kitchen_b"
CONDITIONS = ("local microphone", "1 ESPHome device", "2 ESPHome devices", "4 ESPHome devices")


def clip_key(clip: wy.Clip, level: float) -> str:
    return f"{clip.command.text}@{level:g}"


class EsphomeHome:
    """The Wyoming bench's shared parts, with the media listener and the arbiter the daemon adds."""

    def __init__(self, home: Home, devices: Devices, ports: dict[str, int]) -> None:
        self.home, self.devices = home, devices
        self.media = MediaListener("127.0.0.1")
        self.arbiter = Arbiter()
        confs = {n: SatelliteSettings(uri=f"esphome://127.0.0.1:{p}", room="") for n, p in ports.items()}
        self.settings = home.settings.model_copy(update={"satellites": confs})

        async def media() -> MediaListener:
            return self.media

        self.parts: SatelliteParts = dataclasses.replace(
            home.parts(self.settings), media=media, arbiter=self.arbiter
        )

    async def local_loop(self, mic: wy.LocalMic) -> VoiceLoop:
        """The Wyoming bench's local loop, hooked up as the daemon's ``_voice`` does: with the arbiter."""
        room = self.home.settings.assistant.room or None
        return await self.home.local_loop(mic, room=room, arbiter=self.arbiter)

    @contextlib.asynccontextmanager
    async def connected(self, names: list[str]) -> AsyncIterator[dict[str, Satellite]]:
        """``run_satellite`` for each named device, connected and subscribed; stopped on exit."""
        running = self.home.running
        tasks = [
            asyncio.create_task(
                run_satellite(Component(f"satellite:{n}", []), n, self.parts, running), name=f"bench {n}"
            )
            for n in names
        ]
        try:
            await self.devices.ask("wait", bound_s=90.0, names=names, connections=1, timeout_s=60.0)
            for task in tasks:
                if task.done():
                    raise RuntimeError(f"run_satellite ended: {task.exception()!r}")
            yield {n: running[n] for n in names}
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(task, 15)
            with contextlib.suppress(Exception):
                await self.devices.ask("wait", bound_s=30.0, names=names, connections=0, timeout_s=20.0)


# ---------------------------------------------------------------------------------------------------------
# 1. End of speech -> action, and -> first reply audio


def span_from(made: list[tuple[str, Claim]]) -> float:
    """Where the span the arbiter compares begins: just before the last wake."""
    return max(claim.at for _, claim in made) - LOOKBACK_S if made else 0.0


async def device_round(
    eh: EsphomeHome, spoken: list[wy.Spoken], levels: list[float], delays: list[float]
) -> list[dict[str, Any]]:
    """The devices' wake words fire (``delays`` apart) and each streams its clip; the runs' records."""
    items = [
        {"name": s.where, "clip": clip_key(s.clip, level), "delay_s": delay}
        for s, level, delay in zip(spoken, levels, delays, strict=True)
    ]
    answer = await eh.devices.ask(
        "say", bound_s=150.0, items=items, trailing_silence_s=TRAILING_SILENCE_S, settle_s=120.0
    )
    runs: list[dict[str, Any]] = answer["runs"]
    lead = round(LEAD_S * SAMPLE_RATE)
    for s, run in zip(spoken, runs, strict=True):
        chunks: list[float] = run["chunks"]
        if chunks:
            origin = chunks[0]
            s.started_at = origin - CHUNK_S + lead / SAMPLE_RATE
            last = (lead + s.clip.speech - 1) // (CHUNK_BYTES // 2)  # the chunk holding the last sample
            s.late_s = chunks[last] - (origin + last * CHUNK_S) if last < len(chunks) else float("nan")
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and not all(wy.settled(s) for s in spoken):  # noqa: ASYNC110
        await asyncio.sleep(0.05)  # polled: the loops' records have no event to wait on
    await wy.quiet([s.loop for s in spoken])
    return runs


def device_row(spoken: wy.Spoken, run: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    out = wy.row(spoken, recorder)
    replies = [p for p in run["playbacks"] if p["purpose"] == "reply"]
    out.update(ended_by=run["ended_by"], settled=run["settled"], replies=len(replies))
    heard = wy.find_heard(spoken)
    reply = heard.reply if heard is not None else None
    handled = recorder.of(reply)
    if out["ok"] and handled is not None and replies and replies[0]["first_byte_at"] is not None:
        out["to_audio_ms"] = (replies[0]["first_byte_at"] - handled.action_at) * 1000
        out["fetch_ms"] = (replies[0]["requested_at"] - handled.action_at) * 1000
    return out


def summary(condition: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = wy.summary(condition, rows)
    out["to_audio"] = figures([r["to_audio_ms"] for r in rows if "to_audio_ms" in r])
    out["fetch_ms"] = figures([r["fetch_ms"] for r in rows if "fetch_ms" in r])
    return out


async def bench_e2e(
    eh: EsphomeHome, wake_clips: dict[str, wy.Clip], clips: dict[str, wy.Clip], noise: Samples, rounds: int
) -> dict[str, Any]:
    recorder, rows = eh.home.recorder, []
    kitchen = wy.PLACES[0]
    mic = wy.LocalMic(noise)
    local = await eh.local_loop(mic)
    local_task = asyncio.create_task(local.run(), name="bench local loop")

    try:
        async with eh.connected([kitchen.name]) as sats:
            sat = sats[kitchen.name]
            for round_ in range(rounds):
                command = kitchen.command(round_)
                wy.log(f"esphome e2e round {round_ + 1}/{rounds}: local, then 1 device: {command.text!r}")
                item = wy.Spoken(
                    CONDITIONS[0], "local", LOCAL_SOURCE, round_, wake_clips[command.text], local
                )
                await wy.say_round([item], lambda i: mic.say(i.clip), mic.stamp_of)
                rows.append(wy.row(item, recorder))
                item = wy.Spoken(CONDITIONS[1], sat.name, sat.source, round_, clips[command.text], sat.loop)
                runs = await device_round(eh, [item], [1.0], [0.0])
                rows.append(device_row(item, runs[0], recorder))
    finally:
        local_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await local_task
        await local.aclose()

    for count, condition in ((2, CONDITIONS[2]), (4, CONDITIONS[3])):
        places = wy.PLACES[:count]
        async with eh.connected([p.name for p in places]) as sats:
            for round_ in range(rounds):
                wy.log(f"esphome e2e round {round_ + 1}/{rounds}: {condition} at once")
                items = [
                    wy.Spoken(
                        condition,
                        p.name,
                        sats[p.name].source,
                        round_,
                        clips[p.command(round_).text],
                        sats[p.name].loop,
                    )
                    for p in places
                ]
                runs = await device_round(eh, items, [1.0] * count, [0.0] * count)
                rows.extend(device_row(i, r, recorder) for i, r in zip(items, runs, strict=True))
    return {
        "rounds": rounds,
        "rows": rows,
        "summary": [summary(c, [r for r in rows if r["condition"] == c]) for c in CONDITIONS],
    }


# ---------------------------------------------------------------------------------------------------------
# 2. Shared utterances


async def bench_shared(eh: EsphomeHome, clips: dict[str, wy.Clip], runs: int) -> dict[str, Any]:
    recorder, kitchen = eh.home.recorder, wy.PLACES[0]
    names = [kitchen.name, KITCHEN_B]
    claims: list[tuple[str, Claim]] = []
    utterances: list[dict[str, Any]] = []
    async with eh.connected(names) as sats:
        source_of = {sats[n].source: n for n in names}
        claim = eh.arbiter.claim

        def recorded(source: str, room: str | None, *, wake_score: float | None = None) -> Claim:
            """The arbiter's claim for a wake (every satellite's loop claims through it), recorded."""
            made = claim(source, room, wake_score=wake_score)
            if source in source_of:
                claims.append((source_of[source], made))
            return made

        eh.arbiter.claim = recorded  # type: ignore[method-assign]
        for index in range(runs + OVER_WINDOW_RUNS):
            offset = OVER_WINDOW_S if index >= runs else SHARED_OFFSETS_S[index % len(SHARED_OFFSETS_S)]
            # Every offset with either device louder (the Kitchen's first device always wakes first).
            louder = names[index // len(SHARED_OFFSETS_S) % 2]
            levels = [LEVELS[0] if n == louder else LEVELS[1] for n in names]
            clip = clips[kitchen.command(index).text]
            total = runs + OVER_WINDOW_RUNS
            wy.log(
                f"esphome shared utterance {index + 1}/{total}: second wake +{offset:g} s, {louder} louder"
            )
            handled_from, claims_from = len(recorder.handled), len(claims)
            spoken = [wy.Spoken("shared", n, sats[n].source, index, clip, sats[n].loop) for n in names]
            records = await device_round(eh, spoken, levels, [0.0, offset])
            handled = [h for h in recorder.handled[handled_from:] if h.source in source_of]
            replied = {
                r["name"]: sum(p["purpose"] == "reply" and p["bytes"] > 44 for p in r["playbacks"])
                for r in records
            }
            answered = sorted({source_of[h.source] for h in handled} | {n for n, k in replied.items() if k})
            made = claims[claims_from:]
            utterances.append(
                {
                    "offset_s": offset,
                    "over_window": index >= runs,
                    "louder": louder,
                    "wake_offset_s": records[1]["started_at"] - records[0]["started_at"],
                    "claim_offset_s": (made[-1][1].at - made[0][1].at) if len(made) > 1 else float("nan"),
                    # As the arbiter compared them: over the span every device heard.
                    "levels_db": {n: round(c.level_since(span_from(made)), 1) for n, c in made},
                    "handled": len(handled),
                    "acted": sum(bool(h.reply.actions) and h.reply.actions[0].ok for h in handled),
                    "replied": sum(replied.values()),
                    "answered_by": answered,
                    "told_loser": {
                        r["name"]: [e["type"].removeprefix("VOICE_ASSISTANT_") for e in r["events"]]
                        for r in records
                        if r["name"] not in answered
                    },
                }
            )
    within = [u for u in utterances if not u["over_window"]]
    return {
        "window_s": eh.arbiter.window_s,
        "levels": LEVELS,
        "utterances": utterances,
        "runs": len(within),
        "double": sum(u["handled"] > 1 or u["replied"] > 1 for u in within),
        "unanswered": sum(not u["answered_by"] for u in within),
        "louder_answered": sum(u["answered_by"] == [u["louder"]] for u in within),
        "over_window_both": sum(len(u["answered_by"]) == 2 for u in utterances if u["over_window"]),
    }


# ---------------------------------------------------------------------------------------------------------
# 3. Idle


async def bench_idle(eh: EsphomeHome, seconds: float) -> dict[str, Any]:
    result: dict[str, Any] = {"seconds": seconds}
    wy.log(f"esphome idle: no device connected, {seconds:g} s")
    await asyncio.sleep(2.0)
    result["none"] = await wy.idle_window(seconds, eh.devices.cpu_s)
    wy.log(f"esphome idle: 4 devices connected, {seconds:g} s")
    async with eh.connected([p.name for p in wy.PLACES]):
        await asyncio.sleep(3.0)
        result["four"] = await wy.idle_window(seconds, eh.devices.cpu_s)
    return result


# ---------------------------------------------------------------------------------------------------------
# The run


def device_clips(directory: Path) -> tuple[dict[str, wy.Clip], dict[str, Path]]:
    """Each command as a device streams it after its own wake word (the room, the command, the room),
    and the files the device process loads: every clip at level 1, the Kitchen's at each of LEVELS."""
    clips = wy.make_clips(directory / "speech", wake_word=False, seed=200, lead_s=LEAD_S, tail_s=TAIL_S)
    files: dict[str, Path] = {}
    for clip in clips.values():
        for level in LEVELS if clip.command in (wy.PLACES[0].on, wy.PLACES[0].off) else (1.0,):
            path = files[clip_key(clip, level)] = directory / f"clip-{len(files)}.raw"
            scaled = np.clip(np.round(clip.audio.astype(np.float64) * level), -32768, 32767)
            path.write_bytes(scaled.astype("<i2").tobytes())
    return clips, files


async def bench_esphome(
    home: Home,
    wake_clips: dict[str, wy.Clip],
    noise: Samples,
    tmp: Path,
    *,
    rounds: int,
    idle_s: float,
    shared: int,
) -> dict[str, Any]:
    directory = tmp / "esphome"
    directory.mkdir(parents=True, exist_ok=True)
    wy.log("esphome: synthesizing the commands (what follows a device's own wake word)")
    clips, files = await asyncio.to_thread(device_clips, directory)
    devices = Devices(directory / "devices.log")
    await devices.start()
    track(devices.pid)  # killed at exit whatever happens
    try:
        ports = {}
        for place in (*wy.PLACES, dataclasses.replace(wy.PLACES[0], name=KITCHEN_B)):
            ports[place.name] = (await devices.ask("add", name=place.name, area=place.area))["port"]
        for key, path in files.items():
            await devices.ask("load", clip=key, path=str(path))
        eh = EsphomeHome(home, devices, ports)
        await eh.media.start()
        try:
            result: dict[str, Any] = {
                "window_s": WINDOW_S,
                "lead_s": LEAD_S,
                "clips_s": {t: round(c.speech_s, 2) for t, c in clips.items()},
                "rss_kb_media_started": proc_status()["VmRSS"],
            }
            result["idle"] = await bench_idle(eh, idle_s)
            result["e2e"] = await bench_e2e(eh, wake_clips, clips, noise, rounds)
            result["shared"] = await bench_shared(eh, clips, shared)
            return result
        finally:
            await eh.media.close()
    finally:
        await devices.close()
        untrack(devices.pid)
