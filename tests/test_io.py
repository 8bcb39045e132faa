"""Files (``stitchlab/frontend/io.py``): NumPy's formats written from stitchlab arrays and read back
as stitchlab arrays, and NumPy's dtype names on the namespace."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import stitchlab as sl

A = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)


def test_save_and_load_npy(tmp_path: Any) -> None:
    path = tmp_path / "a.npy"
    sl.save(path, sl.asarray(A) * 2)  # (evaluated when written)
    np.testing.assert_array_equal(np.load(path), A * 2)
    back = sl.load(path)
    assert isinstance(back, sl.ndarray) and back.dtype == np.float32
    np.testing.assert_array_equal(back.get(), A * 2)


def test_savez_and_npz_archives(tmp_path: Any) -> None:
    path = tmp_path / "a.npz"
    sl.savez(path, sl.asarray(A), weights=sl.asarray(A[0]))
    with sl.load(path) as archive:
        assert sorted(archive.files) == ["arr_0", "weights"] and len(archive) == 2
        assert isinstance(archive["weights"], sl.ndarray)
        np.testing.assert_array_equal(archive["arr_0"].get(), A)
        np.testing.assert_array_equal(dict(archive)["weights"].get(), A[0])
    packed = tmp_path / "c.npz"
    sl.savez_compressed(packed, x=sl.arange(5))
    np.testing.assert_array_equal(np.load(packed)["x"], np.arange(5))


def test_text_and_raw_readers(tmp_path: Any) -> None:
    txt = tmp_path / "a.txt"
    sl.savetxt(txt, sl.asarray(A), fmt="%.9g")
    np.testing.assert_array_equal(sl.loadtxt(txt, dtype=np.float32).get(), A)
    np.testing.assert_array_equal(sl.genfromtxt(io.StringIO("1,2\n3,\n"), delimiter=",").get(),
                                  np.genfromtxt(io.StringIO("1,2\n3,\n"), delimiter=","))
    raw = tmp_path / "a.bin"
    A.tofile(raw)
    np.testing.assert_array_equal(sl.fromfile(raw, dtype=np.float32).get(), A.ravel())
    buf = A.tobytes()
    got = sl.frombuffer(buf, dtype=np.float32)
    np.testing.assert_array_equal(got.get(), A.ravel())
    np.testing.assert_array_equal(sl.fromiter(range(4), dtype=np.int16).get(), np.arange(4, dtype=np.int16))


def test_unsupported_contents_raise_naming_the_dtype(tmp_path: Any) -> None:
    path = tmp_path / "s.npy"
    np.save(path, np.array(["a", "b"]))
    with pytest.raises(TypeError, match="dtype <U1; supported dtypes are"):
        sl.load(path)
    with pytest.raises(ValueError, match="allow_pickle"):
        np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object))
        sl.load(tmp_path / "o.npy")


def test_bfloat16_is_refused_by_the_npy_writers_with_the_fix(tmp_path: Any) -> None:
    bf = pytest.importorskip("ml_dtypes").bfloat16
    x = sl.asarray(A.astype(bf))
    for call in (lambda: sl.save(tmp_path / "b.npy", x), lambda: sl.savez(tmp_path / "b.npz", x),
                 lambda: sl.savez(tmp_path / "b.npz", w=x), lambda: sl.savez_compressed(tmp_path / "b.npz", A, w=x),
                 lambda: sl.save(tmp_path / "b.npy", A.astype(bf))):
        with pytest.raises(TypeError, match=r"no bfloat16.*x.astype\(np.float32\)"):
            call()
    assert not list(tmp_path.iterdir())  # refused before anything is written
    sl.save(tmp_path / "f.npy", x.astype(np.float32))  # the fix named: exact
    np.testing.assert_array_equal(sl.load(tmp_path / "f.npy").astype(bf).get(), A.astype(bf))
    np.save(tmp_path / "v.npy", A.astype(bf))  # NumPy's own: raw |V2 records
    with pytest.raises(TypeError, match=r"\|V2.*view\(ml_dtypes.bfloat16\)"):
        sl.load(tmp_path / "v.npy")
    np.testing.assert_array_equal(sl.asarray(np.load(tmp_path / "v.npy").view(bf)).get(), A.astype(bf))


def test_numpys_dtype_names() -> None:
    for name in ("intp", "double", "single", "half", "bool", "int_", "uint", "byte", "ubyte", "short", "intc"):
        assert getattr(sl, name) is getattr(np, name)
        assert name in dir(sl)
    assert sl.dtype is np.dtype and sl.issubdtype(sl.float16, sl.floating)
    assert sl.zeros(2, dtype=sl.double).dtype == np.float64
    assert not hasattr(sl, "longdouble") and not hasattr(sl, "complex128")  # (not stitchlab dtypes)
