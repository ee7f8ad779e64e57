"""``homeassist validate-model`` on the embedded server, as the daemon would run it (``[ollama] provider =
"auto"`` with no Ollama): a llama-server started for the checks with the cached model, checked through
the real OpenAI-compatible client, and stopped; a model that cannot load fails the first check."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from homeassist.cli import validate
from homeassist.config.loader import LoadedConfig, load_settings
from standins.llama import CACHE_DIR, MODEL_0_5B, cached_model

pytestmark = pytest.mark.timeout(600)


def loaded(tmp_path: Path, closed_url: str, **overrides: str) -> LoadedConfig:
    env = {
        "HOMEASSIST_PATHS__STATE_DIR": str(tmp_path / "state"),
        "HOMEASSIST_OLLAMA__BASE_URL": closed_url,
        "HOMEASSIST_OLLAMA__TIMEOUT_S": "240",
    }
    return load_settings(env=env | {f"HOMEASSIST_{k}": v for k, v in overrides.items()})


def test_auto_without_ollama_validates_the_embedded_model(
    tmp_path: Path, closed_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOMEASSIST_LLM_CACHE", str(CACHE_DIR))
    cached_model(MODEL_0_5B)  # names scripts/setup-llm when the machine's cache is empty
    args = argparse.Namespace(model=None, full_suite=False, json=True)
    code = validate.run(args, loaded(tmp_path, closed_url))
    report = json.loads(capsys.readouterr().out)
    rows = {check["name"]: check["status"] for check in report["checks"]}
    assert report["model"] == "qwen2.5-coder-0.5b-instruct-q4_k_m" and report["base_url"].startswith(
        "http://127.0.0.1:"
    )
    assert rows["server reachable"] == rows["model loads"] == rows["plain chat"] == "ok", report
    # Every check ran against it, through the real client. Whether this model passes each of them is
    # the model's (the 0.5B's tool call is a warning here, and may fail on a busy machine).
    assert set(rows) == {
        "server reachable",
        "model present",
        "model loads",
        "plain chat",
        "streaming",
        "tool call",
        "tool arguments",
        "restraint",
        "empty answer retried",
    }, report
    assert code == (0 if report["ok"] else 1), report
    assert not list((tmp_path / "state").glob("llm-slots"))  # the daemon's state is left alone


def test_a_model_that_is_no_gguf_fails_the_first_check(
    tmp_path: Path, closed_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOMEASSIST_LLM_CACHE", str(CACHE_DIR))
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"nothing")
    args = argparse.Namespace(model=str(broken), full_suite=False, json=True)
    code = validate.run(args, loaded(tmp_path, closed_url, OLLAMA__PROVIDER="embedded"))
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and [c["name"] for c in report["checks"]] == ["server reachable"]
    assert "not a GGUF file" in report["checks"][0]["detail"] and str(broken) in report["checks"][0]["detail"]
