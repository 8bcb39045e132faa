"""The byte format of one stored value: a checksummed header plus payload. Never a pickle.

Layout::

    b"SLREG" | format version (1 byte) | sha256(body) (32 bytes) | body
    body = header length (4 bytes, big endian) | header (JSON, UTF-8) | payload

The header holds the key, the entry kind (``"kernel"`` or ``"record"``), the key components
or the record's kind and name, the metadata and the creation time. The payload is the cubin
for a kernel and the JSON text of the data for a record. Decoding checks the magic, the
checksum, the header and that the header's key is the key asked for, so a truncated,
garbled or misplaced file is never trusted.
"""

from __future__ import annotations

import hashlib
import json
import struct
import time
from dataclasses import dataclass
from typing import Any

from ._keys import make_key

MAGIC = b"SLREG"
FORMAT_VERSION = 1
_PREFIX = MAGIC + bytes([FORMAT_VERSION])
_DIGEST_SIZE = 32
_LEN = struct.Struct(">I")
_MIN_SIZE = len(_PREFIX) + _DIGEST_SIZE + _LEN.size


class CorruptEntry(ValueError):
    """A stored value failed its checks (truncated, garbled, misplaced or not ours)."""


class ForeignFormat(CorruptEntry):
    """A stored value was written in another registry format version: a clean miss."""


@dataclass(frozen=True)
class Decoded:
    """A value that passed every check.

    Attributes:
        key: the key it was stored under.
        header: the JSON header (kind, components or record name, meta, created).
        payload: the cubin bytes, or a record's JSON text as bytes.
    """

    key: str
    header: dict[str, Any]
    payload: bytes

    @property
    def kind(self) -> str:
        return str(self.header["kind"])


def encode(key: str, header: dict[str, Any], payload: bytes) -> bytes:
    """Pack ``header`` and ``payload`` for ``key`` into one checksummed value.

    ``header`` must be JSON-serializable; ``key`` and ``created`` are filled in.
    """
    full = dict(header)
    full["key"] = key
    full.setdefault("created", time.time())
    head = json.dumps(full, sort_keys=True, separators=(",", ":")).encode("utf-8")
    body = _LEN.pack(len(head)) + head + bytes(payload)
    return _PREFIX + hashlib.sha256(body).digest() + body


def decode(key: str, value: object) -> Decoded:
    """Check and unpack a stored value.

    Raises:
        ForeignFormat: the value carries our magic but another format version.
        CorruptEntry: anything else wrong: not bytes, truncated, checksum mismatch,
            unreadable header, or a header that belongs to another key.
    """
    if not isinstance(value, bytes):
        raise CorruptEntry(f"value is {type(value).__name__}, expected bytes")
    if len(value) < _MIN_SIZE:
        raise CorruptEntry(f"value is truncated ({len(value)} bytes)")
    if value[: len(MAGIC)] != MAGIC:
        raise CorruptEntry("value does not start with the registry magic bytes")
    version = value[len(MAGIC)]
    if version != FORMAT_VERSION:
        raise ForeignFormat(f"value has registry format {version}, this is format {FORMAT_VERSION}")
    start = len(_PREFIX)
    stored_digest = value[start : start + _DIGEST_SIZE]
    body = value[start + _DIGEST_SIZE :]
    if hashlib.sha256(body).digest() != stored_digest:
        raise CorruptEntry("checksum mismatch (truncated or modified value)")
    (head_len,) = _LEN.unpack_from(body)
    head_end = _LEN.size + head_len
    if head_end > len(body):
        raise CorruptEntry("header length runs past the end of the value")
    try:
        header = json.loads(body[_LEN.size : head_end].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptEntry(f"header is not JSON: {error}") from None
    if not isinstance(header, dict) or header.get("key") != key:
        raise CorruptEntry(f"header belongs to key {header.get('key')!r}, not {key!r}")
    kind = header.get("kind")
    if kind == "kernel":
        components = header.get("components")
        try:
            components_key = make_key(components)
        except (TypeError, ValueError) as error:
            raise CorruptEntry(f"stored components are invalid: {error}") from None
        if components_key != key:
            raise CorruptEntry("stored components do not hash to the key")
        if not isinstance(header.get("meta"), dict):
            raise CorruptEntry("kernel metadata is not a JSON object")
    elif kind == "record":
        _check_record(key, header.get("record"), body[head_end:])
    else:
        raise CorruptEntry(f"unknown entry kind {kind!r}")
    created = header.get("created", 0.0)
    if isinstance(created, bool) or not isinstance(created, int | float):
        raise CorruptEntry(f"creation time {created!r} is not a number")
    return Decoded(key=key, header=header, payload=body[head_end:])


def _check_record(key: str, record: object, payload: bytes) -> None:
    """A record's header names the kind and name its key is made of, and its payload is the
    JSON text of a dict (what ``put_record`` writes)."""
    if not isinstance(record, dict):
        raise CorruptEntry("record header has no kind and name")
    kind, name = record.get("kind"), record.get("name")
    if not (isinstance(kind, str) and isinstance(name, str)) or key != f"record/{kind}/{name}":
        raise CorruptEntry(f"record {kind!r}/{name!r} does not belong under the key {key!r}")
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptEntry(f"record data is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise CorruptEntry(f"record data is a JSON {type(data).__name__}, not an object")
