"""The API token: made once, private to its owner, compared in constant time."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from homeassist.api.token import FILE_NAME, authorized, ensure_token, read_token, token_path
from homeassist.config.loader import load_settings
from homeassist.errors import HomeassistError

TOKEN = "k7Qp2xVb9mZr4sTn8wLc3yHd6fGj1aEu5oIi0PqRsTu"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_missing_token_is_created_private(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "state" / "homeassist" / FILE_NAME
    caplog.set_level(logging.INFO, logger="homeassist.api.token")
    token = ensure_token(path)
    assert mode(path) == 0o600
    assert len(token) >= 32
    assert token.isascii() and token.isprintable() and " " not in token
    assert path.read_text(encoding="ascii") == token + "\n"
    assert f"Created the API token in {path}" in caplog.text
    assert token not in caplog.text


def test_the_token_is_kept_across_starts(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    first = ensure_token(path)
    assert ensure_token(path) == first
    assert read_token(path) == first
    assert mode(path) == 0o600


def test_two_files_get_different_tokens(tmp_path: Path) -> None:
    assert ensure_token(tmp_path / "a") != ensure_token(tmp_path / "b")


def test_a_token_readable_by_others_is_made_private(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / FILE_NAME
    path.write_text(f"  {TOKEN}\n", encoding="ascii")
    path.chmod(0o644)
    caplog.set_level(logging.WARNING, logger="homeassist.api.token")
    assert ensure_token(path) == TOKEN
    assert mode(path) == 0o600
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == f"{path} was readable by others (mode 644); making it private (600)"


def test_a_private_token_is_left_alone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / FILE_NAME
    path.write_text(TOKEN, encoding="ascii")
    path.chmod(0o400)
    caplog.set_level(logging.DEBUG, logger="homeassist.api.token")
    assert ensure_token(path) == TOKEN
    assert mode(path) == 0o400
    assert caplog.records == []


@pytest.mark.parametrize("content", ["", "\n", "short\n", "a" * 15])
def test_a_short_token_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / FILE_NAME
    path.write_text(content, encoding="ascii")
    path.chmod(0o600)
    with pytest.raises(HomeassistError, match="shorter than 16 characters") as err:
        ensure_token(path)
    assert str(path) in str(err.value)
    assert path.read_text(encoding="ascii") == content  # never overwritten


def test_a_token_of_16_characters_is_enough(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    path.write_text("a" * 16, encoding="ascii")
    path.chmod(0o600)
    assert ensure_token(path) == "a" * 16


def test_an_unreadable_token_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    path.write_bytes(b"\xff" * 40)
    path.chmod(0o600)
    with pytest.raises(HomeassistError, match=r"check \[api\] token_file") as err:
        ensure_token(path)
    assert str(path) in str(err.value)
    assert isinstance(err.value.__cause__, UnicodeDecodeError)


def test_read_token(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    assert read_token(path) is None
    assert not path.exists()  # reading never creates it
    path.write_text(f"{TOKEN}\n", encoding="ascii")
    assert read_token(path) == TOKEN


def test_the_token_file_follows_the_settings(tmp_path: Path) -> None:
    settings = load_settings(env={"HOMEASSIST_PATHS__STATE_DIR": str(tmp_path / "state")}).settings
    assert token_path(settings) == tmp_path / "state" / FILE_NAME
    settings = load_settings(env={"HOMEASSIST_API__TOKEN_FILE": "~/secrets/homeassist-token"}).settings
    assert token_path(settings) == Path.home() / "secrets" / "homeassist-token"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, False),
        ("", False),
        (TOKEN, False),
        (f"Basic {TOKEN}", False),
        (f"Token {TOKEN}", False),
        ("Bearer", False),
        ("Bearer ", False),
        ("Bearer wrong", False),
        (f"Bearer {TOKEN}x", False),
        (f"Bearer {TOKEN[:-1]}", False),
        (f"Bearer {TOKEN.upper()}", False),
        (f"Bearer {TOKEN}", True),
        (f"Bearer   {TOKEN}  ", True),
        (f"Bearer {TOKEN}\t", True),
    ],
)
def test_authorized(header: str | None, expected: bool) -> None:
    assert authorized(header, TOKEN) is expected


def test_authorized_takes_non_ascii_without_failing() -> None:
    assert not authorized("Bearer jetón-ü", TOKEN)
