"""``stitchlab registry stats | list | show KEY | clear | prune --max-size SIZE | export FILE | import FILE``.

The core command line calls :func:`register`; ``python -m stitchlab.registry`` runs the
same commands on their own.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import warnings
from typing import Any

from ._archive import ArchiveError, export_archive, import_archive
from ._paths import ENV_CACHE_DIR, ENV_MAX_SIZE, env_wants_memory
from ._registry import DEFAULT_MAX_SIZE, RECORD_PREFIX, KernelRegistry, env_max_size
from ._sizes import format_size, parse_size

#: The components shown in ``list`` (the rest are in ``show``).
_LIST_COMPONENTS = ("gpu_arch", "dtypes", "schedule", "shape_class")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``registry`` subcommand and its own subcommands to ``subparsers``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--cache-dir",
        metavar="DIR",
        help=f"registry directory (default: ${ENV_CACHE_DIR}, else the user cache directory)",
    )
    parser = subparsers.add_parser(
        "registry",
        help="inspect and manage the kernel registry",
        description="Inspect and manage the persistent kernel registry.",
    )
    commands = parser.add_subparsers(dest="registry_command", metavar="ACTION", required=True)

    p = commands.add_parser("stats", parents=[common], help="where it is, how many entries, size")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_stats)

    p = commands.add_parser(
        "list", parents=[common], help="one line per entry, least recently used first"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_list)

    p = commands.add_parser(
        "show", parents=[common], help="components, metadata and checksum of one entry"
    )
    p.add_argument("key", metavar="KEY", help="a key, a unique prefix of one, or record/KIND/NAME")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_show)

    p = commands.add_parser("clear", parents=[common], help="remove every entry")
    p.set_defaults(func=cmd_clear)

    p = commands.add_parser(
        "prune", parents=[common], help="evict least recently used entries down to a size"
    )
    p.add_argument("--max-size", required=True, metavar="SIZE", help="e.g. 512MiB, 2GiB, 1048576")
    p.set_defaults(func=cmd_prune)

    p = commands.add_parser("export", parents=[common], help="write every entry to an archive")
    p.add_argument("file", metavar="FILE", help="archive to write (.tar.gz)")
    p.set_defaults(func=cmd_export)

    p = commands.add_parser("import", parents=[common], help="check and import an archive")
    p.add_argument("file", metavar="FILE", help="archive written by `stitchlab registry export`")
    p.set_defaults(func=cmd_import)


def _open(args: argparse.Namespace) -> KernelRegistry | None:
    """Open the registry the arguments or the environment name; None (with a message) if unusable."""
    max_size = DEFAULT_MAX_SIZE
    if os.environ.get(ENV_MAX_SIZE, "").strip():
        try:
            max_size = env_max_size(os.environ[ENV_MAX_SIZE].strip())
        except ValueError as error:  # a bad argument, as argparse's: exit status 2
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(2) from None
    path = getattr(args, "cache_dir", None)
    if path is not None and not path.strip():
        print("error: --cache-dir '' names no directory; give a directory", file=sys.stderr)
        raise SystemExit(2)
    if path is None and env_wants_memory():
        print(
            f"the registry is memory-only (${ENV_CACHE_DIR}); there is nothing on disk to manage",
            file=sys.stderr,
        )
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            registry = KernelRegistry(path, max_size=max_size)
        except ValueError as error:  # e.g. $STITCHLAB_CACHE_DIR='~nosuchuser/x'
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(2) from None
    if registry.mode != "disk":
        reason = caught[0].message if caught else "unknown reason"
        print(f"error: {reason}", file=sys.stderr)
        return None
    return registry


def _count(number: int, word: str) -> str:
    """``_count(1, "entry") == "1 entry"``, ``_count(3, "record") == "3 records"``."""
    if number == 1:
        return f"1 {word}"
    return f"{number} {word[:-1] + 'ies' if word.endswith('y') else word + 's'}"


def _time(stamp: float) -> str:
    if not stamp:
        return "-"
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


def cmd_stats(args: argparse.Namespace) -> int:
    registry = _open(args)
    if registry is None:
        return 1
    entries = registry.entries()
    stats = registry.stats()
    kernels = sum(e["kind"] == "kernel" for e in entries)
    report = {
        "path": stats["path"],
        "mode": stats["mode"],
        "entries": len(entries),
        "kernels": kernels,
        "records": len(entries) - kernels,
        "value_bytes": sum(e["size"] for e in entries),
        "bytes": stats["bytes"],
        "max_size": stats["max_size"],
        "oldest": min((e["created"] for e in entries), default=None),
        "last_used": max((e["last_access"] for e in entries), default=None),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"registry   {report['path']}")
    print(
        f"entries    {report['entries']} ({_count(kernels, 'kernel')}, "
        f"{_count(report['records'], 'record')})"
    )
    print(
        f"size       {format_size(report['bytes'])} on disk ({format_size(report['value_bytes'])} "
        f"of values), cap {format_size(report['max_size'])}"
    )
    if entries:
        print(f"oldest     {_time(report['oldest'])}")
        print(f"last used  {_time(report['last_used'])}")
    return 0


def _describe(entry: dict[str, Any]) -> str:
    if entry["kind"] == "record":
        record = entry.get("record") or {}
        return f"record {record.get('kind')}/{record.get('name')}"
    components = entry.get("components") or {}
    shown = [f"{n}={components[n]}" for n in _LIST_COMPONENTS if n in components]
    return " ".join(shown) or f"{len(components)} components"


def cmd_list(args: argparse.Namespace) -> int:
    registry = _open(args)
    if registry is None:
        return 1
    entries = registry.entries()
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    if not entries:
        print(f"the registry at {registry.path} is empty")
        return 0
    print(f"{'KEY':<16}  {'KIND':<6}  {'SIZE':>9}  {'HITS':>5}  {'LAST USED':<19}  WHAT")
    for entry in entries:
        key = entry["key"][:16] if entry["kind"] == "kernel" else "-"
        print(
            f"{key:<16}  {entry['kind']:<6}  {format_size(entry['size']):>9}  {entry['hits']:>5}  "
            f"{_time(entry['last_access']):<19}  {_describe(entry)}"
        )
    total = sum(e["size"] for e in entries)
    print(f"{_count(len(entries), 'entry')}, {format_size(total)}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    registry = _open(args)
    if registry is None:
        return 1
    wanted = args.key.strip()
    if not wanted:
        print("error: an empty KEY names no entry; give a key or a unique prefix of one (see "
              "`stitchlab registry list`)", file=sys.stderr)
        return 2
    entries = registry.entries()
    matches = [e for e in entries if e["key"] == wanted] or [
        e for e in entries if e["key"].startswith(wanted) and not wanted.startswith(RECORD_PREFIX)
    ]
    if not matches:
        print(
            f"error: no entry with key {wanted!r} in {registry.path}; see `stitchlab registry list`",
            file=sys.stderr,
        )
        return 1
    if len(matches) > 1:
        keys = ", ".join(e["key"][:16] for e in matches[:5])
        print(
            f"error: {wanted!r} matches {len(matches)} entries ({keys}...); give more of the key",
            file=sys.stderr,
        )
        return 2
    summary = matches[0]
    key = summary["key"]
    detail: dict[str, Any] = dict(summary)
    if key.startswith(RECORD_PREFIX):
        # kind and name from the key itself (the index's tag may be damaged)
        kind, _, name = key[len(RECORD_PREFIX) :].partition("/")
        detail.update(kind="record", record={"kind": kind, "name": name})
        try:
            detail["data"] = registry.get_record(kind, name)
        except ValueError:  # a key of no record this registry can write
            detail["data"] = None
        found = detail["data"] is not None
    else:
        entry = registry.get(key)
        found = entry is not None
        if entry is not None:
            import hashlib

            detail.update(
                kind="kernel",
                components=entry.components,
                meta=entry.meta,
                blob_size=len(entry.blob),
                blob_sha256=hashlib.sha256(entry.blob).hexdigest(),
                blob_format="ELF (cubin)" if entry.blob[:4] == b"\x7fELF" else "unknown",
            )
    if not found:
        print(
            f"error: entry {key} could not be read (corrupt or removed); it was dropped",
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps(detail, indent=2))
        return 0
    print(f"key          {key}")
    print(f"kind         {detail['kind']}")
    print(f"size         {format_size(detail['size'])} stored")
    print(f"created      {_time(detail['created'])}")
    print(f"last used    {_time(detail['last_access'])}   hits {detail['hits']}")
    if detail["kind"] == "record":
        print(f"record       {detail['record']['kind']}/{detail['record']['name']}")
        print("data")
        print(_indent(json.dumps(detail["data"], indent=2, sort_keys=True)))
        return 0
    print(
        f"cubin        {format_size(detail['blob_size'])}, {detail['blob_format']}, sha256 {detail['blob_sha256']}"
    )
    print("components")
    width = max(len(n) for n in detail["components"])
    for name, value in sorted(detail["components"].items()):
        print(f"  {name:<{width}}  {value}")
    print("meta")
    print(_indent(json.dumps(detail["meta"], indent=2, sort_keys=True)))
    return 0


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def cmd_clear(args: argparse.Namespace) -> int:
    registry = _open(args)
    if registry is None:
        return 1
    count = registry.clear()
    print(f"removed {_count(count, 'entry')} from {registry.path}")
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    try:
        limit = parse_size(args.max_size)
    except ValueError as error:
        print(f"error: --max-size: {error}", file=sys.stderr)
        return 2
    registry = _open(args)
    if registry is None:
        return 1
    before = registry.stats()["bytes"]
    evicted = registry.prune(limit)
    after = registry.stats()["bytes"]
    print(
        f"evicted {_count(len(evicted), 'entry')} (least recently used first): "
        f"{format_size(before)} -> {format_size(after)}, limit {format_size(limit)}"
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    registry = _open(args)
    if registry is None:
        return 1
    try:
        summary = export_archive(registry, args.file)
    except OSError as error:
        print(f"error: cannot write {args.file}: {error}", file=sys.stderr)
        return 1
    print(
        f"exported {_count(summary.kernels, 'kernel')} and {_count(summary.records, 'record')} "
        f"({format_size(summary.bytes)}) to {args.file}"
    )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    registry = _open(args)
    if registry is None:
        return 1
    try:
        summary = import_archive(registry, args.file)
    except ArchiveError as error:
        print(f"error: {error}", file=sys.stderr)
        for problem in error.problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(
        f"imported {_count(summary.kernels, 'kernel')} and {_count(summary.records, 'record')} "
        f"({format_size(summary.bytes)}) into {registry.path}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``registry`` commands without the core command line (``python -m stitchlab.registry``)."""
    parser = argparse.ArgumentParser(prog="python -m stitchlab.registry")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["registry", *(sys.argv[1:] if argv is None else argv)])
    return run_quietly_into_a_closed_pipe(args.func, args)


def run_quietly_into_a_closed_pipe(func: Any, args: argparse.Namespace) -> int:
    """``func(args)``; where the reader of stdout has gone (``... | head -3``), exit quietly
    with 141 (128 + SIGPIPE, as a shell reports a command the pipe ended) instead of a
    ``BrokenPipeError`` traceback."""
    try:
        code = int(func(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at devnull so that flush cannot fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
