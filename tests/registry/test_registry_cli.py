"""`stitchlab registry ...`: through argparse directly, and through `python -m stitchlab`."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from registry_helpers import kernel_components, payload
from stitchlab.registry import KernelRegistry, make_key
from stitchlab.registry.cli import register


def cli(*argv: str) -> tuple[int, str, str]:
    """Run `registry ARGV` through a parser built the way the core CLI builds it."""
    parser = argparse.ArgumentParser(prog="stitchlab")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["registry", *argv])
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = args.func(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def filled(cache_dir: Path) -> Path:
    registry = KernelRegistry(cache_dir)
    for i in range(3):
        registry.put(kernel_components(i), payload(i, 5000), {"name": f"k{i}"})
    registry.put_record("plan", "softmax", {"groups": [[0, 1]]})
    return cache_dir


def test_stats_human_and_json(filled: Path) -> None:
    code, out, _ = cli("stats", "--cache-dir", str(filled))
    assert code == 0 and "4 (3 kernels, 1 record)" in out and "KiB" in out
    code, out, _ = cli("stats", "--json", "--cache-dir", str(filled))
    report = json.loads(out)
    assert report["kernels"] == 3 and report["records"] == 1 and report["path"] == str(filled)


def test_list_human_and_json(filled: Path) -> None:
    code, out, _ = cli("list", "--cache-dir", str(filled))
    assert code == 0
    assert make_key(kernel_components(0))[:16] in out and "record plan/softmax" in out
    assert "gpu_arch=sm_90" in out and "4 entries" in out
    code, out, _ = cli("list", "--json", "--cache-dir", str(filled))
    assert {e["kind"] for e in json.loads(out)} == {"kernel", "record"}


def test_show_by_prefix_and_record(filled: Path) -> None:
    key = make_key(kernel_components(1))
    code, out, _ = cli("show", key[:10], "--cache-dir", str(filled))
    assert code == 0 and key in out and "source_digest" in out and '"name": "k1"' in out
    assert "ELF (cubin)" in out
    code, out, _ = cli("show", "record/plan/softmax", "--cache-dir", str(filled))
    assert code == 0 and '"groups"' in out
    code, _, err = cli("show", "nope", "--cache-dir", str(filled))
    assert code == 1 and "no entry with key 'nope'" in err
    code, _, err = cli("show", "", "--cache-dir", str(filled))
    assert code == 2 and "an empty KEY names no entry" in err


def test_show_refuses_an_empty_key_even_with_one_entry(tmp_path: Path) -> None:
    """An empty (or blank) KEY is a prefix of every key: with one entry it showed that one."""
    KernelRegistry(tmp_path).put(kernel_components(1), payload(1), {})
    for key in ("", "  "):
        code, out, err = cli("show", key, "--cache-dir", str(tmp_path))
        assert code == 2 and out == "" and "an empty KEY names no entry" in err


def test_prune_and_clear(filled: Path) -> None:
    code, out, _ = cli("prune", "--max-size", "1KiB", "--cache-dir", str(filled))
    assert code == 0 and "evicted 4 entries" in out
    code, _, err = cli("prune", "--max-size", "lots", "--cache-dir", str(filled))
    assert code == 2 and "cannot read size 'lots'" in err
    KernelRegistry(filled).put(kernel_components(5), payload(5), {})
    code, out, _ = cli("clear", "--cache-dir", str(filled))
    assert code == 0 and "removed 1 entry" in out
    assert KernelRegistry(filled).entries() == []


def test_export_import_pre_warms_another_registry(filled: Path, tmp_path: Path) -> None:
    archive = tmp_path / "warm.tar.gz"
    code, out, _ = cli("export", str(archive), "--cache-dir", str(filled))
    assert code == 0 and "exported 3 kernels and 1 record" in out
    other = tmp_path / "node2"
    code, out, _ = cli("import", str(archive), "--cache-dir", str(other))
    assert code == 0 and "imported 3 kernels and 1 record" in out
    registry = KernelRegistry(other)
    for i in range(3):
        entry = registry.get_or_build(kernel_components(i), lambda: pytest.fail("rebuilt"))
        assert entry.blob == payload(i, 5000) and entry.meta == {"name": f"k{i}"}
    assert registry.get_record("plan", "softmax") == {"groups": [[0, 1]]}


def _rewrite(archive: Path, target: Path, change) -> None:  # noqa: ANN001 - a callable
    with tarfile.open(archive) as source, tarfile.open(target, "w:gz") as out:
        members = {m.name: source.extractfile(m).read() for m in source.getmembers()}
        for name, data in change(members).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize(
    "tamper", ["payload", "manifest_checksum", "missing_member", "not_an_archive"]
)
def test_import_refuses_a_damaged_archive_entirely(
    filled: Path, tmp_path: Path, tamper: str
) -> None:
    archive, damaged = tmp_path / "warm.tar.gz", tmp_path / "damaged.tar.gz"
    assert cli("export", str(archive), "--cache-dir", str(filled))[0] == 0

    def change(members: dict[str, bytes]) -> dict[str, bytes]:
        manifest = json.loads(members["manifest.json"])
        first = manifest["entries"][0]["file"]
        if tamper == "payload":
            members[first] = members[first][:-1] + bytes([members[first][-1] ^ 1])
        elif tamper == "manifest_checksum":
            manifest["entries"][1]["sha256"] = "0" * 64
        else:
            del members[first]
        members["manifest.json"] = json.dumps(manifest).encode()
        return members

    if tamper == "not_an_archive":
        damaged.write_bytes(b"hello")
    else:
        _rewrite(archive, damaged, change)
    target = tmp_path / "node2"
    code, _, err = cli("import", str(damaged), "--cache-dir", str(target))
    assert code == 1 and "refusing to import" in err and "nothing was imported" in err
    assert KernelRegistry(target).entries() == []


def test_import_refuses_a_consistent_archive_with_a_forged_value(
    filled: Path, tmp_path: Path
) -> None:
    """Manifest and file agree, but the value's own checksum does not."""
    archive, forged = tmp_path / "warm.tar.gz", tmp_path / "forged.tar.gz"
    cli("export", str(archive), "--cache-dir", str(filled))

    def change(members: dict[str, bytes]) -> dict[str, bytes]:
        import hashlib

        manifest = json.loads(members["manifest.json"])
        item = manifest["entries"][0]
        value = bytearray(members[item["file"]])
        value[-1] ^= 1
        members[item["file"]] = bytes(value)
        item["sha256"] = hashlib.sha256(value).hexdigest()
        members["manifest.json"] = json.dumps(manifest).encode()
        return members

    _rewrite(archive, forged, change)
    code, _, err = cli("import", str(forged), "--cache-dir", str(tmp_path / "node2"))
    assert code == 1 and "checksum mismatch" in err


def test_unusable_directory_is_an_error_not_a_memory_registry(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli("stats", "--cache-dir", str(blocker / "sub"))
    assert code == 1 and "cannot use the directory" in err


def test_python_dash_m_stitchlab_registry(filled: Path) -> None:
    for module in ("stitchlab", "stitchlab.registry"):
        argv = [sys.executable, "-m", module]
        argv += ["registry"] if module == "stitchlab" else []
        done = subprocess.run(
            [*argv, "stats", "--json", "--cache-dir", str(filled)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["kernels"] == 3


@pytest.mark.parametrize("value", ["banana", "-1", "12 parsecs"])
def test_a_bad_max_size_in_the_environment_is_an_error_line_and_status_2(
    filled: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("STITCHLAB_CACHE_MAX_SIZE", value)
    parser = argparse.ArgumentParser(prog="stitchlab")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["registry", "stats", "--cache-dir", str(filled)])
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        args.func(args)
    assert exit_.value.code == 2
    assert err.getvalue().startswith(f"error: $STITCHLAB_CACHE_MAX_SIZE: cannot read size {value!r}")
    assert "512K, 100MiB" in err.getvalue() and "Traceback" not in err.getvalue()


def test_output_into_a_closed_pipe_ends_quietly(filled: Path) -> None:
    """`stitchlab registry show KEY | head -3`: no BrokenPipeError traceback, status 141."""
    KernelRegistry(filled).put_record("plan", "big", {"rows": [list(range(50))] * 4000})
    for module in ("stitchlab", "stitchlab.registry"):
        argv = [sys.executable, "-m", module, *(["registry"] if module == "stitchlab" else [])]
        argv += ["show", "record/plan/big", "--cache-dir", str(filled)]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            assert proc.stdout.readline().startswith(b"key")
            proc.stdout.close()  # the reader goes, as head does
            err = proc.stderr.read().decode()
        assert proc.returncode == 141 and "Traceback" not in err and "BrokenPipeError" not in err, err


def test_a_damaged_index_tag_does_not_break_list_or_show(filled: Path) -> None:
    import sqlite3

    with sqlite3.connect(filled / "cache.db") as db:
        db.execute("""UPDATE Cache SET tag = '{"kind":"record","record":"zz","components":[1]}'""")
    db.close()
    code, out, err = cli("list", "--cache-dir", str(filled))
    assert code == 0 and "4 entries" in out, err
    code, out, err = cli("show", "record/plan/softmax", "--cache-dir", str(filled))
    assert code == 0 and "plan/softmax" in out and '"groups"' in out, err
    key = make_key(kernel_components(0))
    code, out, err = cli("show", key[:12], "--cache-dir", str(filled))
    assert code == 0 and "components" in out, err


@pytest.mark.parametrize("value", ["0", "9" * 400])
def test_a_zero_or_huge_max_size_in_the_environment_is_an_error_line(
    filled: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("STITCHLAB_CACHE_MAX_SIZE", value)
    with pytest.raises(SystemExit) as exit_:
        cli("stats", "--cache-dir", str(filled))
    assert exit_.value.code == 2


def test_prune_to_a_huge_size_is_an_error_line(filled: Path) -> None:
    code, _, err = cli("prune", "--max-size", "9" * 400, "--cache-dir", str(filled))
    assert code == 2 and err.startswith("error: --max-size: size") and "largest" in err


def test_an_empty_cache_dir_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser(prog="stitchlab")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["registry", "list", "--cache-dir", ""])
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        args.func(args)
    assert exit_.value.code == 2 and "--cache-dir '' names no directory" in err.getvalue()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", [".", "{dir}"])
def test_export_to_a_directory_is_an_error_line(filled: Path, tmp_path: Path, target: str) -> None:
    target = target.format(dir=tmp_path)
    code, _, err = cli("export", target, "--cache-dir", str(filled))
    assert code == 1 and err.startswith(f"error: cannot write {target}") and "is a directory" in err


@pytest.mark.parametrize(
    ("record", "payload", "created", "message"),
    [
        ({"kind": "plan", "name": "softmax"}, b"\xff not JSON", 1.0, "record data is not JSON"),
        ({"kind": "plan", "name": "softmax"}, b"[1, 2]", 1.0, "record data is a JSON list"),
        ({"kind": "plan", "name": "other"}, b"{}", 1.0, "does not belong under the key"),
        (None, b"{}", 1.0, "record header has no kind and name"),
        ({"kind": "plan", "name": "softmax"}, b"{}", "yesterday", "creation time 'yesterday'"),
    ],
)
def test_import_refuses_a_well_sealed_record_that_is_not_a_record(
    filled: Path, tmp_path: Path, record: object, payload: bytes, created: object, message: str
) -> None:
    """A value whose checksum is right but whose content put_record could never have written
    (it made get_record raise UnicodeDecodeError, or return a list or another record's data)."""
    import hashlib

    from stitchlab.registry._envelope import encode

    archive, forged = tmp_path / "warm.tar.gz", tmp_path / "forged.tar.gz"
    cli("export", str(archive), "--cache-dir", str(filled))
    key = "record/plan/softmax"

    def change(members: dict[str, bytes]) -> dict[str, bytes]:
        manifest = json.loads(members["manifest.json"])
        (item,) = [e for e in manifest["entries"] if e["key"] == key]
        value = encode(key, {"kind": "record", "record": record, "created": created}, payload)
        members[item["file"]] = value
        item["sha256"] = hashlib.sha256(value).hexdigest()
        members["manifest.json"] = json.dumps(manifest).encode()
        return members

    _rewrite(archive, forged, change)
    node2 = tmp_path / "node2"
    code, _, err = cli("import", str(forged), "--cache-dir", str(node2))
    assert code == 1 and message in err, err
    assert KernelRegistry(node2).get_record("plan", "softmax") is None


def test_a_cache_dir_with_an_unknown_user_is_an_error_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STITCHLAB_CACHE_DIR", "~no-such-user-stitchlab/cache")
    parser = argparse.ArgumentParser(prog="stitchlab")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["registry", "stats"])
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        args.func(args)
    assert exit_.value.code == 2
    assert err.getvalue().startswith("error: $STITCHLAB_CACHE_DIR='~no-such-user-stitchlab/cache'")
