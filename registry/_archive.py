"""Export and import registry archives, to pre-warm the registries of a cluster.

An archive is a gzip-compressed tar file with ``manifest.json`` and one file per entry
(``entries/000000.bin``: the stored value, header and payload with their own checksum).
The manifest lists every entry's key, kind, file, size and SHA-256. Import reads the
members without extracting anything to disk, checks every entry against the manifest and
against its own checksum and key, and imports nothing at all if any check fails.

The checksums detect damaged or mixed-up archives, not a deliberate forgery: import only
archives you trust, as a cubin runs on your GPU.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._envelope import CorruptEntry, decode
from ._registry import KernelRegistry

ARCHIVE_FORMAT = "stitchlab-registry-archive"
ARCHIVE_VERSION = 1
MANIFEST = "manifest.json"
_MAX_MEMBER = 1 << 30


class ArchiveError(ValueError):
    """An archive that cannot be imported; ``problems`` lists every reason."""

    def __init__(self, path: str | os.PathLike[str], problems: list[str]) -> None:
        self.problems = problems
        shown = "; ".join(problems[:5]) + (
            f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        super().__init__(f"refusing to import {os.fspath(path)}: nothing was imported ({shown})")


@dataclass(frozen=True)
class ArchiveSummary:
    """What an export wrote or an import stored."""

    kernels: int
    records: int
    bytes: int


def export_archive(registry: KernelRegistry, path: str | os.PathLike[str]) -> ArchiveSummary:
    """Write every readable entry of ``registry`` to the archive ``path``.

    Corrupt entries are skipped (and dropped from the registry with a warning).
    """
    manifest: dict[str, Any] = {
        "format": ARCHIVE_FORMAT,
        "version": ARCHIVE_VERSION,
        "created": time.time(),
        "source": str(registry.path) if registry.path is not None else None,
        "entries": [],
    }
    counts = {"kernel": 0, "record": 0}
    total = 0
    target = Path(path)
    if not target.name or target.is_dir():
        raise IsADirectoryError(
            errno.EISDIR, "is a directory; give an archive file name, e.g. registry.tar.gz", str(path)
        )
    partial = target.with_name(target.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        for summary in registry.entries():
            key = summary["key"]
            value = registry.stored_value(key)
            if value is None:
                continue
            kind = decode(key, value).kind
            name = f"entries/{len(manifest['entries']):06d}.bin"
            _add_member(tar, name, value)
            manifest["entries"].append(
                {
                    "key": key,
                    "kind": kind,
                    "file": name,
                    "size": len(value),
                    "sha256": hashlib.sha256(value).hexdigest(),
                }
            )
            counts[kind] += 1
            total += len(value)
        _add_member(tar, MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8"))
    os.replace(partial, target)
    return ArchiveSummary(kernels=counts["kernel"], records=counts["record"], bytes=total)


def import_archive(registry: KernelRegistry, path: str | os.PathLike[str]) -> ArchiveSummary:
    """Check every entry of the archive ``path``, then store them all in ``registry``.

    Raises:
        ArchiveError: if the archive cannot be read, its manifest is not ours, or any
            entry's checksum, key or components do not match; nothing is imported then.
    """
    problems: list[str] = []
    checked: list[tuple[str, bytes]] = []
    try:
        with tarfile.open(path, "r:*") as tar:
            manifest = _read_manifest(tar)
            seen: set[str] = set()
            for number, item in enumerate(manifest["entries"]):
                problem, value = _check_entry(tar, number, item, seen)
                if problem:
                    problems.append(problem)
                else:
                    checked.append((item["key"], value))
    except (OSError, tarfile.TarError, ValueError, KeyError, TypeError) as error:
        raise ArchiveError(path, [f"unreadable archive: {error}"]) from None
    if problems:
        raise ArchiveError(path, problems)
    counts = {"kernel": 0, "record": 0}
    for key, value in checked:
        counts[registry.import_value(key, value)] += 1
    return ArchiveSummary(
        kernels=counts["kernel"], records=counts["record"], bytes=sum(len(v) for _, v in checked)
    )


def _add_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o600
    tar.addfile(info, io.BytesIO(data))


def _read_member(tar: tarfile.TarFile, name: str) -> bytes:
    member = tar.getmember(name)
    if not member.isfile():
        raise ValueError(f"member {name!r} is not a regular file")
    if member.size > _MAX_MEMBER:
        raise ValueError(f"member {name!r} is {member.size} bytes, over the 1 GiB limit")
    handle = tar.extractfile(member)
    if handle is None:
        raise ValueError(f"member {name!r} cannot be read")
    return handle.read()


def _read_manifest(tar: tarfile.TarFile) -> dict[str, Any]:
    manifest = json.loads(_read_member(tar, MANIFEST))
    if not isinstance(manifest, dict) or manifest.get("format") != ARCHIVE_FORMAT:
        raise ValueError(f"{MANIFEST} is not a {ARCHIVE_FORMAT} manifest")
    if manifest.get("version") != ARCHIVE_VERSION:
        raise ValueError(
            f"archive version {manifest.get('version')!r}; this stitchlab reads version "
            f"{ARCHIVE_VERSION}"
        )
    if not isinstance(manifest.get("entries"), list):
        raise ValueError(f"{MANIFEST} has no entry list")
    return manifest


def _check_entry(
    tar: tarfile.TarFile, number: int, item: Any, seen: set[str]
) -> tuple[str | None, bytes]:
    if not isinstance(item, dict) or not all(
        isinstance(item.get(field), str) for field in ("key", "file", "sha256")
    ):
        return f"manifest entry {number} is malformed", b""
    key = item["key"]
    if key in seen:
        return f"entry {key[:16]} appears twice", b""
    seen.add(key)
    try:
        value = _read_member(tar, item["file"])
    except (KeyError, ValueError, tarfile.TarError) as error:
        return f"entry {key[:16]}: {error}", b""
    if hashlib.sha256(value).hexdigest() != item["sha256"]:
        return f"entry {key[:16]}: checksum does not match the manifest", b""
    try:
        decode(key, value)
    except CorruptEntry as error:
        return f"entry {key[:16]}: {error}", b""
    return None, value
