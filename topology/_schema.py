"""A small JSON Schema validator (the subset our schemas use) and JSON loading with positions.

We do not depend on ``jsonschema``: the schemas here use only ``type``, ``const``, ``enum``,
``required``, ``properties``, ``additionalProperties`` (boolean or schema), ``items``,
``minItems``, ``minimum``, ``exclusiveMinimum``, ``minLength`` and ``$ref`` to ``#/$defs/...``.
The tests check that ``jsonschema`` (when installed) agrees with this validator on our documents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import DocumentError

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "null": (type(None),),
}


def _is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _errors(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> list[str]:
    """Return ``["$.path: message", ...]`` for every violation (first violation per node)."""
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            raise NotImplementedError(f"unsupported $ref {ref!r}")
        schema = root["$defs"][ref[len("#/$defs/"):]]
    out: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in types):
            return [f"{path}: {json.dumps(value)[:60]} is not of type {' or '.join(types)}"]
    if "const" in schema and value != schema["const"]:
        return [f"{path}: {json.dumps(value)[:60]} should be {json.dumps(schema['const'])}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(v) for v in schema["enum"])
        return [f"{path}: {json.dumps(value)[:60]} is not one of {allowed}"]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: {value!r} is less than the minimum {schema['minimum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            out.append(f"{path}: {value!r} must be greater than {schema['exclusiveMinimum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        out.append(f"{path}: {json.dumps(value)} is shorter than {schema['minLength']} characters")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: has {len(value)} items, expected at least {schema['minItems']}")
        if "items" in schema:
            for i, item in enumerate(value):
                out += _errors(item, schema["items"], root, f"{path}[{i}]")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                out.append(f"{path}: missing required property {json.dumps(name)}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in props:
                out += _errors(item, props[name], root, _key(path, name))
            elif extra is False:
                known = ", ".join(sorted(props))
                out.append(f"{_key(path, name)}: unknown property; expected one of {known}")
            elif isinstance(extra, dict):
                out += _errors(item, extra, root, _key(path, name))
    return out


def schema_errors(value: Any, schema: dict[str, Any]) -> list[str]:
    """All violations of ``schema`` by ``value`` as ``"$.path: message"`` strings (empty: valid)."""
    return _errors(value, schema, schema, "$")


def validate(value: Any, schema: dict[str, Any], source: str | None = None) -> None:
    """Raise :class:`DocumentError` naming the JSON path of the first violation, if any."""
    errors = schema_errors(value, schema)
    if errors:
        where, _, message = errors[0].partition(": ")
        if len(errors) > 1:
            shown = "; ".join(errors[1:6])
            message += f" (and {len(errors) - 1} more: {shown}{'; ...' if len(errors) > 6 else ''})"
        raise DocumentError(message, where=where, source=source)


def parse_json(text: str, source: str | None = None) -> Any:
    """``json.loads`` that reports syntax errors with line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno,
                            source=source) from None


def read_json(path: str | Path) -> Any:
    """Read and parse a JSON file; errors name the file, and the line/column of syntax errors."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DocumentError(f"cannot read the file: {exc.strerror}", source=str(path)) from None
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start}: {exc.reason}); is this a JSON "
                            "file?", source=str(path)) from None
    return parse_json(text, source=str(path))


def write_json(path: str | Path, data: Any) -> None:
    """Write ``data`` as indented JSON (stable key order) with a trailing newline."""
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
