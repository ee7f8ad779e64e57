"""Where homeassist's parts that are not Python are found (``homeassist.install_root``): beside the
source tree it is imported from, or beside the virtual environment it is installed into (as
scripts/install-service lays out /opt/homeassist), never relative to site-packages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import homeassist
from tests.conftest import REPO


def tree(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'homeassist'\n", encoding="utf-8")
    return root


def test_from_this_checkout() -> None:
    assert homeassist.install_root() == REPO
    assert (homeassist.install_root() / "zwave-sim" / "sim.mjs").is_file()


def test_a_package_installed_into_the_virtual_environment_finds_the_tree_around_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opt = tree(tmp_path / "opt" / "homeassist")
    site = opt / ".venv" / "lib" / "python3.11" / "site-packages" / "homeassist"
    site.mkdir(parents=True)
    monkeypatch.setattr(homeassist, "__file__", str(site / "__init__.py"))
    monkeypatch.setattr(sys, "prefix", str(opt / ".venv"))
    assert homeassist.install_root() == opt


def test_a_package_imported_from_a_copied_tree_finds_that_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opt = tree(tmp_path / "opt" / "homeassist")
    (opt / "homeassist").mkdir()
    monkeypatch.setattr(homeassist, "__file__", str(opt / "homeassist" / "__init__.py"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "elsewhere" / ".venv"))
    assert homeassist.install_root() == opt
