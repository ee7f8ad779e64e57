"""Query attempt statistics: the definition of success, SQLite across restarts, and the stats command."""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
from pathlib import Path

import pytest

from homeassist.cli.logs.requests import RequestLog
from homeassist.config.loader import load_settings
from homeassist.daemon import build_runtime
from homeassist.messages import Intent, Reply, ToolResult
from homeassist.stats import FILE_NAME, Stats, format_rates, judge
from standins.ollama import OllamaStandIn, reply, tool_calls
from tests.conftest import run_cli


def a_reply(
    text: str = "Done.", *, ok: bool = True, recoveries: tuple[str, ...] = (), error: str | None = None
) -> Reply:
    action = ToolResult("turn_on", {"device": "x"}, ok, "x" if ok else "Error: x", 1.0)
    return Reply(
        text=text,
        request="turn on x",
        intent=Intent("device", 0.9),
        path="model",
        actions=(action,),
        recoveries=recoveries,
        error=error,
        request_id="abc",
        timings_ms={"total": 12.0},
    )


def test_success_is_a_good_answer_with_ok_tools_and_no_recovery() -> None:
    assert judge(a_reply()).first_ok is True
    assert judge(a_reply(recoveries=("empty_retry",))) == judge(a_reply(recoveries=("empty_retry",)))
    retried = judge(a_reply(recoveries=("empty_retry",)))
    assert (retried.first_ok, retried.final_ok, retried.retries) == (False, True, 1)
    assert judge(a_reply(ok=False)).final_ok is False
    assert judge(a_reply("  ")).final_ok is False
    assert judge(a_reply(error="ModelTimeoutError: slow")).final_ok is False


def test_a_broken_database_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "stats.sqlite3"
    path.write_text("this is not a database", encoding="utf-8")
    outcome = Stats(path).record(a_reply(), "qwen3:0.6b")
    assert outcome.final_ok and "Could not record request statistics" in caplog.text


async def test_an_empty_first_attempt_is_a_failure_and_its_retry_a_success(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="homeassist.stats")
    async with OllamaStandIn() as ollama:
        env = {
            "HOMEASSIST_OLLAMA__BASE_URL": ollama.url,
            "HOMEASSIST_PATHS__STATE_DIR": str(tmp_path),
            "HOMEASSIST_ZWAVE__URL": "ws://127.0.0.1:9",
            "HOMEASSIST_ASSISTANT__PREFER_LOCAL": "false",
        }
        runtime = build_runtime(load_settings(env=env).settings)
        try:
            ollama.script(reply(""), reply("It's noon."))
            await runtime.assistant.handle("what time is it")
            ollama.script(reply("Paris."))
            await runtime.assistant.handle("what is the capital of france")
            runtime.assistant.prefer_local = True
            await runtime.assistant.handle("what time is it")
        finally:
            await runtime.aclose()
    assert "First query: failure" in caplog.text and "Retry 1 (empty_retry): success" in caplog.text
    assert "First query: success" in caplog.text
    # A new Stats on the same file (a restart) reads the same rates.
    rates = {(r.model, r.path): r for r in Stats(tmp_path / FILE_NAME).rates()}
    model = rates[("qwen3:0.6b", "model")]
    assert (model.requests, model.first_ok, model.retried, model.retried_ok) == (2, 1, 1, 1)
    assert model.first_rate == 0.5 and model.retry_rate == 1.0
    assert rates[("-", "local")].requests == 1
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        assert db.execute("SELECT recoveries FROM requests WHERE first_ok = 0").fetchone() == (
            '["empty_retry"]',
        )
    table = format_rates(list(rates.values()))
    assert "qwen3:0.6b" in table and "50.0%" in table and "100.0%" in table


def test_the_stats_command_shows_rates_after_requests_and_a_restart(cli_env: dict[str, str]) -> None:
    assert run_cli("stats", env=cli_env).stdout.startswith("No requests recorded yet.")
    with OllamaStandIn() as ollama:
        env = cli_env | {"HOMEASSIST_OLLAMA__BASE_URL": ollama.url}
        ollama.script(tool_calls(("get_current_datetime", {})), reply("It's noon."), reply(""), reply(""))
        for text in ("what time is it then", "what's the time now"):
            assert (
                run_cli(
                    "ask", text, "--json", env=env | {"HOMEASSIST_ASSISTANT__PREFER_LOCAL": "false"}
                ).returncode
                == 0
            )
    result = run_cli("stats", "--json", env=cli_env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    (row,) = data["rates"]
    assert (row["model"], row["path"], row["requests"]) == ("qwen3:0.6b", "model", 2)
    assert row["first_query_success"] == 0.5 and row["retried"] == 1 and row["retry_success"] == 0.0
    text = run_cli("stats", env=cli_env).stdout
    assert text.splitlines()[0].split() == [
        "model",
        "path",
        "requests",
        "first",
        "ok",
        "retried",
        "retry",
        "ok",
        "p50",
        "ms",
        "p95",
        "ms",
    ]


def test_each_request_is_stored_with_its_rounds_tools_and_recoveries(tmp_path: Path) -> None:
    stats = Stats(tmp_path / FILE_NAME)
    replied = dataclasses.replace(a_reply(recoveries=("text_tool_call",)), rounds=2)
    stats.record(replied, "qwen3:0.6b")
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        row = db.execute(
            "SELECT model, path, kind, first_ok, final_ok, retries, rounds, tools FROM requests"
        ).fetchone()
    assert row == ("qwen3:0.6b", "model", "device", 0, 1, 1, 2, '["turn_on:ok"]')


def test_a_failed_request_is_stored_with_its_error_kind_not_its_detail(tmp_path: Path) -> None:
    stats = Stats(tmp_path / FILE_NAME)
    failed = dataclasses.replace(
        a_reply(error="ModelTimeoutError: no answer from http://127.0.0.1:11434 within 30 s"),
        error_kind="ModelTimeoutError",
    )
    stats.record(failed, "qwen3:0.6b")
    stats.record(a_reply(), "qwen3:0.6b")
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        errors = [row[0] for row in db.execute("SELECT error FROM requests ORDER BY at")]
    assert errors == ["ModelTimeoutError", None]


def test_stage_timings_are_kept_and_what_was_said_only_when_the_user_chose_to(tmp_path: Path) -> None:
    timed = dataclasses.replace(a_reply(), timings_ms={"classify": 0.3, "tools": 30.5, "total": 31.0})
    Stats(tmp_path / FILE_NAME).record(timed, "-")
    Stats(tmp_path / FILE_NAME, store_transcripts=True).record(timed, "-")
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        rows = db.execute("SELECT stages, text FROM requests ORDER BY rowid").fetchall()
    assert [json.loads(stages) for stages, _ in rows] == [[["classify", 0.3], ["tools", 30.5]]] * 2
    assert [text for _, text in rows] == [None, "turn on x"]


def test_a_database_of_an_older_daemon_gains_the_new_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    with sqlite3.connect(path) as db:  # the first release's table, one row in it
        db.execute(
            "CREATE TABLE requests (id TEXT NOT NULL, at REAL NOT NULL, model TEXT NOT NULL, path TEXT NOT "
            "NULL, kind TEXT NOT NULL, first_ok INTEGER NOT NULL, final_ok INTEGER NOT NULL, retries INTEGER "
            "NOT NULL, recoveries TEXT NOT NULL, rounds INTEGER NOT NULL, tools TEXT NOT NULL, error TEXT, "
            "total_ms REAL NOT NULL)"
        )
        values = "('old', 1.0, '-', 'local', 'device', 1, 1, 0, '[]', 0, '[]', NULL, 5.0)"
        db.execute(f"INSERT INTO requests VALUES {values}")
    # `homeassist logs` reads it as it is (read-only: it adds nothing), then the daemon adds the columns.
    [old] = RequestLog(path).recent(10, None)
    assert (old.id, old.total_ms, old.stages, old.text, old.slowest) == ("old", 5.0, (), None, None)
    Stats(path).record(a_reply(), "-")
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT id, total_ms, stages FROM requests ORDER BY rowid").fetchall()
    assert rows == [("old", 5.0, None), ("abc", 12.0, "[]")]
