"""A resumable work log: finished chunks of a long job, one JSON line each.

A long stage (teacher generation, evaluation) splits its work into fixed chunks and
appends each chunk's results as one line once the whole chunk is done (a chunk key is
an index, or a task id where each episode is its own unit, as in evaluation). A killed run
loses at most the chunk in progress; a torn last line is ignored. The first line is a
fingerprint of everything that determines the results (config, model, inputs): a log
written under another fingerprint is discarded, never silently mixed in. Each chunk line
carries the SHA-256 of the fingerprint, chunk key and payload: a line edited by hand, even
into well-formed JSON, fails it and the whole log is discarded and the work redone.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .jsonio import atomic_write_bytes, dumps, sha256_bytes


class ChunkLog:
    def __init__(self, path: Path, fingerprint: dict[str, Any]):
        self.path = Path(path)
        self.fingerprint = json.loads(dumps(fingerprint))  # canonical, JSON-comparable
        self.chunks: dict[int | str, Any] = {}
        self.discarded = False
        self._load()

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []
        entries = []
        for line in lines:
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                break  # torn by a kill mid-write: everything after it is lost work, not data
        if entries and (entries[0] != {"fingerprint": self.fingerprint}
                        or any(e.get("sha256") != self._checksum(e.get("chunk"), e.get("payload")) for e in entries[1:])):
            self.discarded, entries = True, []
        self.chunks = {e["chunk"]: e["payload"] for e in entries[1:]}
        # rewrite without a torn tail, so appended lines start on a fresh line
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = [{"fingerprint": self.fingerprint}] + [self._entry(k, v) for k, v in self.chunks.items()]
        atomic_write_bytes(self.path, "".join(dumps(e) + "\n" for e in body).encode("utf-8"))

    def _checksum(self, chunk: int | str, payload: Any) -> str:
        return sha256_bytes(dumps([self.fingerprint, chunk, payload]).encode("utf-8"))

    def _entry(self, chunk: int | str, payload: Any) -> dict:
        return {"chunk": chunk, "payload": payload, "sha256": self._checksum(chunk, payload)}

    def done(self, chunk: int | str) -> bool:
        return chunk in self.chunks

    def append(self, chunk: int | str, payload: Any) -> None:
        payload = json.loads(dumps(payload))  # as it will read back, so the checksum matches
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(dumps(self._entry(chunk, payload)) + "\n")
            f.flush()
        self.chunks[chunk] = payload

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def chunked(items: list, size: int) -> list[list]:
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    return [items[i: i + size] for i in range(0, len(items), size)]
