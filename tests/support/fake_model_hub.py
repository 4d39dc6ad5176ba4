"""A loopback stand-in for the Hugging Face hub, for the real download path (fastembed through huggingface_hub,
pointed here by ``HF_ENDPOINT``): it serves one local model folder as ``Qdrant/all-MiniLM-L6-v2-onnx``, the repo
fastembed downloads all-MiniLM-L6-v2 from, or as another repo.

It answers what huggingface_hub asks for: model info (``/api/models/{repo}[/revision/{rev}]``), the file tree
(``/api/models/{repo}/tree/{rev}``) and the files (``HEAD`` / ``GET /{repo}/resolve/{rev}/{file}``, with ranges).
Large files are LFS files: their ETag is their sha256, as on the real hub; the others' is their git blob hash.

``mode`` makes the transfer of ``model.onnx`` fail as networks do: ``cut`` closes every transfer half-way,
``cut_once`` only the first (the client resumes), ``corrupt`` sends the right length with wrong bytes while the
advertised checksum stays the true one.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

REPO = "Qdrant/all-MiniLM-L6-v2-onnx"
LFS_MIN_BYTES = 1 << 20
MODES = ("normal", "cut", "cut_once", "corrupt")


@dataclass
class _File:
    path: str
    source: Path
    size: int
    oid: str  # git blob hash (of the LFS pointer, for an LFS file)
    etag: str
    lfs: dict[str, Any] | None


def _digest(path: Path, digest: Any) -> str:
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return str(digest.hexdigest())


def _files(folder: Path) -> dict[str, _File]:
    files = {}
    for source in sorted(p for p in folder.iterdir() if p.is_file()):
        size = source.stat().st_size
        blob = _digest(source, hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False))
        if size >= LFS_MIN_BYTES:
            sha256 = _digest(source, hashlib.sha256())
            pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()
            oid = hashlib.sha1(f"blob {len(pointer)}\0".encode() + pointer, usedforsecurity=False).hexdigest()
            lfs = {"oid": sha256, "size": size, "pointerSize": len(pointer)}
            files[source.name] = _File(source.name, source, size, oid, sha256, lfs)
        else:
            files[source.name] = _File(source.name, source, size, blob, blob, None)
    return files


@dataclass
class FakeModelHub:
    folder: Path
    mode: str = "normal"
    repo: str = REPO
    files: dict[str, _File] = field(init=False)
    commit: str = field(init=False)
    requests: list[str] = field(default_factory=list)
    model_gets: int = 0

    def __post_init__(self) -> None:
        self.files = _files(self.folder)
        listing = "".join(f"{f.path}\0{f.oid}\n" for f in self.files.values())
        self.commit = hashlib.sha1(listing.encode(), usedforsecurity=False).hexdigest()

    def info(self) -> dict[str, Any]:
        siblings = [{"rfilename": f.path, "size": f.size, "blobId": f.oid} for f in self.files.values()]
        return {"id": self.repo, "modelId": self.repo, "sha": self.commit, "private": False, "siblings": siblings}

    def tree(self) -> list[dict[str, Any]]:
        return [
            {"type": "file", "oid": f.oid, "size": f.size, "path": f.path, **({"lfs": f.lfs} if f.lfs else {})}
            for f in self.files.values()
        ]


def _handler(hub: FakeModelHub) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            hub.requests.append(f"{self.command} {self.path}")

        def do_GET(self) -> None:
            self._route()

        def do_HEAD(self) -> None:
            self._route()

        def _json(self, data: Any, status: int = 200) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if status == 404:
                self.send_header("X-Error-Code", "EntryNotFound")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _route(self) -> None:
            path = unquote(urlsplit(self.path).path)
            repo = re.escape(hub.repo)
            if re.fullmatch(rf"/api/models/{repo}(/revision/[^/]+)?/?", path, re.IGNORECASE):
                return self._json(hub.info())
            if re.fullmatch(rf"/api/models/{repo}/tree/[^/]+/?", path, re.IGNORECASE):
                return self._json(hub.tree())
            found = re.fullmatch(rf"/{repo}/resolve/[^/]+/(.+)", path, re.IGNORECASE)
            if found and found.group(1) in hub.files:
                return self._file(hub.files[found.group(1)])
            return self._json({"error": "not found"}, 404)

        def _file(self, f: _File) -> None:
            start = 0
            ranged = re.fullmatch(r"bytes=(\d+)-\d*", self.headers.get("Range", "").strip())
            if ranged and int(ranged.group(1)) < f.size:
                start = int(ranged.group(1))
            self.send_response(206 if start else 200)
            self.send_header("X-Repo-Commit", hub.commit)
            self.send_header("ETag", f'"{f.etag}"')
            if f.lfs:
                self.send_header("X-Linked-Etag", f'"{f.etag}"')
                self.send_header("X-Linked-Size", str(f.size))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(f.size - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{f.size - 1}/{f.size}")
            self.end_headers()
            if self.command == "HEAD":
                return
            data = f.source.read_bytes()[start:]
            if f.path.endswith(".onnx"):
                with lock:
                    hub.model_gets += 1
                    first = hub.model_gets == 1
                if hub.mode == "cut" or (hub.mode == "cut_once" and first):
                    self.wfile.write(data[: max(0, f.size // 2 - start)])
                    self.close_connection = True
                    return
                if hub.mode == "corrupt":
                    middle = len(data) // 2
                    data = data[:middle] + bytes(b ^ 0xFF for b in data[middle : middle + 4096]) + data[middle + 4096 :]
            self.wfile.write(data)

    return Handler


@contextmanager
def serving(folder: Path, mode: str = "normal", repo: str = REPO) -> Iterator[tuple[str, FakeModelHub]]:
    """The hub on a free loopback port: (its ``HF_ENDPOINT`` URL, the hub and its request log), serving ``folder``
    as the repo ``repo``."""
    hub = FakeModelHub(folder, mode, repo)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hub
    finally:
        server.shutdown()
        server.server_close()
