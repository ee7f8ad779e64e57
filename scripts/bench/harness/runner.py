"""What every bench's ``main`` does the same way: its ``--help`` is its docstring, ``--json PATH`` writes
its figures to a file, and a target line says PASS or FAIL.

Contract: ``bench_parser(__doc__)`` is an ``ArgumentParser`` with ``--json PATH`` already on it (the
bench adds its own options); ``write_json(args.json, result)`` writes ``result`` as indented JSON when a
path was given (values JSON cannot hold are written as their ``str``), saying so on stderr, and does
nothing otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def bench_parser(doc: str | None) -> argparse.ArgumentParser:
    """``--help`` prints ``doc`` as written; ``--json PATH`` is there."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def write_json(path: Path | None, result: Any) -> None:
    """``result`` to ``path`` as indented JSON, and a line on stderr that says so (nothing without a
    path)."""
    if path is not None:
        path.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"figures written to {path}", file=sys.stderr)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"
