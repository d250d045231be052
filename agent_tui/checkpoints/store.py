"""A content-addressed blob store: sha256 -> bytes, one file per blob.

Blobs live at ``<root>/<first two hex>/<rest>``; files are 0600 and folders 0700.
A blob is written atomically (``agent_tui.atomic``), so a reader sees either nothing or
the whole blob; ``get`` checks the hash, so a damaged blob is never
restored as if it were the old content.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from agent_tui.atomic import write_atomic
from agent_tui.paths import private_dir


class BlobMissing(KeyError):
    """No blob with that hash (or it is damaged)."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = private_dir(Path(root))

    def _path(self, digest: str) -> Path:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256 hex digest: {digest!r}")
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        """Store ``data`` (durably) and return its sha256."""
        digest = sha256_hex(data)
        target = self._path(digest)
        if target.exists():
            return digest
        write_atomic(private_dir(target.parent), target.name, data)
        return digest

    def get(self, digest: str) -> bytes:
        try:
            data = self._path(digest).read_bytes()
        except FileNotFoundError:
            raise BlobMissing(digest) from None
        if sha256_hex(data) != digest:
            raise BlobMissing(f"{digest} (damaged)")
        return data

    def has(self, digest: str) -> bool:
        return self._path(digest).exists()

    def delete(self, digest: str) -> None:
        self._path(digest).unlink(missing_ok=True)

    def digests(self) -> Iterator[str]:
        for folder in sorted(self.root.iterdir()):
            if folder.is_dir() and len(folder.name) == 2:
                for f in folder.iterdir():
                    if not f.name.startswith("."):
                        yield folder.name + f.name

    def usage_bytes(self) -> int:
        return sum(
            f.stat().st_size for folder in self.root.iterdir() if folder.is_dir()
            for f in folder.iterdir()
        )

