"""Imports point one way, down the pipeline (DESIGN.md, "Dependencies point one way"): every import of
every module under ``homeassist/``, those inside functions included, is checked against the layers.

``audio`` imports only the bottom layer (config, errors, messages, vocabulary, caches, timeouts), and only
the daemon and the commands import it: it sits beside zwave and scheduler, as do the request statistics,
metrics and logging set-up.
A part in no layer fails the test until it is placed."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

# Top first: a part may import its own layer and the layers below it, never one above.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"__main__", "cli"}),
    frozenset({"daemon", "api"}),
    frozenset({"assistant"}),
    frozenset({"intent", "llm", "web", "mcp"}),
    frozenset({"tools"}),
    frozenset({"zwave", "scheduler", "audio", "wyoming", "esphome", "stats", "metrics", "logs"}),
    frozenset(
        {
            "config",
            "messages",
            "errors",
            "vocabulary",
            "numbers",
            "toolspec",
            "home",
            "backoff",
            "caches",
            "timeouts",
        }
    ),
)

#: Wrong-way imports not fixed yet: (importing module, part it imports) -> the issue that fixes it.
#: Remove an entry with its import (the test warns about entries whose import is gone).
ALLOWED: dict[tuple[str, str], str] = {}

PACKAGE = Path(__file__).resolve().parents[1] / "homeassist"


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> Iterator[str]:
    """Every module ``path`` imports (inside functions too), as absolute names."""
    module = module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield base
            # "from homeassist import daemon" imports the part daemon.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def part_of(module: str, root: Path) -> str | None:
    """The top-level part (``intent``, ``messages``, ...) of a module of the package, else None."""
    parts = module.split(".")
    if parts[0] != root.name or len(parts) < 2:
        return None
    return parts[1] if (root / parts[1]).is_dir() or (root / f"{parts[1]}.py").is_file() else None


def rank(part: str) -> int:
    for number, layer in enumerate(LAYERS):
        if part in layer:
            return number
    raise AssertionError(f"homeassist/{part} is in no layer: add it to LAYERS in tests/test_layers.py")


def wrong_way_imports(root: Path) -> dict[tuple[str, str], str]:
    """(module, part it imports) -> why that is wrong: a part of a higher layer, or a part of the same
    layer that imports the module's own part back (api and daemon)."""
    uses: dict[tuple[str, str], set[str]] = {}  # (part, part it imports) -> the modules that do
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        own = part_of(module, root)
        if own is None:
            continue
        for imported in imports(path, root):
            other = part_of(imported, root)
            if other is not None and other != own:
                uses.setdefault((own, other), set()).add(module)
    found: dict[tuple[str, str], str] = {}
    for (own, other), modules in sorted(uses.items()):
        if rank(other) < rank(own):
            found.update(dict.fromkeys(((m, other) for m in sorted(modules)), f"{other} is a higher layer"))
        elif rank(other) == rank(own) and (other, own) in uses:
            found.update(dict.fromkeys(((m, other) for m in sorted(modules)), f"{other} imports {own} too"))
    return found


def test_no_part_imports_a_higher_layer_or_one_that_imports_it() -> None:
    found = wrong_way_imports(PACKAGE)
    wrong = [
        f"{module} imports {part}: {why}"
        for (module, part), why in found.items()
        if (module, part) not in ALLOWED
    ]
    assert not wrong, "\n".join(wrong)
    if stale := [f"{module} -> {part}" for module, part in ALLOWED if (module, part) not in found]:
        warnings.warn(f"fixed: remove from ALLOWED in tests/test_layers.py: {stale}", stacklevel=1)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "homeassist"


def test_the_check_finds_a_wrong_way_import_inside_a_function(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "homeassist/__init__.py": "",
            "homeassist/errors.py": "",
            "homeassist/daemon/__init__.py": "from homeassist.config import loader\n",
            "homeassist/config/__init__.py": "",
            "homeassist/config/loader.py": (
                "from homeassist import errors\n\ndef late() -> None:\n    from ..daemon import main\n"
            ),
        },
    )
    assert wrong_way_imports(root) == {("homeassist.config.loader", "daemon"): "daemon is a higher layer"}


def test_the_check_finds_two_parts_of_one_layer_importing_each_other(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "homeassist/api/server.py": "from homeassist.daemon.requests import QueueFullError\n",
            "homeassist/daemon/main.py": "import homeassist.api.server\n",
        },
    )
    assert wrong_way_imports(root) == {
        ("homeassist.api.server", "daemon"): "daemon imports api too",
        ("homeassist.daemon.main", "api"): "api imports daemon too",
    }


def test_a_part_in_no_layer_is_named(tmp_path: Path) -> None:
    root = write(
        tmp_path, {"homeassist/gadgets.py": "from homeassist import errors\n", "homeassist/errors.py": ""}
    )
    with pytest.raises(AssertionError, match="homeassist/gadgets is in no layer"):
        wrong_way_imports(root)
