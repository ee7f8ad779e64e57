"""homeassist: a local voice home-assistant daemon."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__version__ = "0.1.0"


def install_root() -> Path:
    """The directory holding homeassist's parts that are not Python: ``zwave-sim/`` and ``mcp-servers/``
    (locked npm packages, installed there by ``scripts/setup``) and ``config/`` (the simulated home).

    They stay beside the source tree the package is installed from, with its virtual environment
    (``.venv``): a checkout, or ``/opt/homeassist`` (``scripts/install-service``). That is the directory
    holding this package when it is imported from the tree (an editable install, install-service's copy),
    else the one holding the running virtual environment (the package installed into
    ``/opt/homeassist/.venv``). The one place these paths are worked out."""
    import sys
    from pathlib import Path

    package = Path(__file__).resolve().parent
    for tree in (package.parent, Path(sys.prefix).resolve().parent):
        if (tree / "pyproject.toml").is_file():
            return tree
    return package.parent
