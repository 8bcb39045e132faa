"""Files: NumPy's readers and writers with stitchlab arrays (as CuPy's ``cupy.load``/``cupy.save``).

Readers (``load``, ``loadtxt``, ``genfromtxt``, ``fromfile``, ``frombuffer``, ``fromiter``)
read on the host with NumPy and return stitchlab arrays (on the device under the CuPy backend); an
``.npz`` archive gives an :class:`NpzFile` whose arrays are stitchlab arrays. Writers (``save``,
``savez``, ``savez_compressed``, ``savetxt``) evaluate the arrays and write NumPy's formats.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..ir.dtypes import is_bfloat16
from .array import LazyArray
from .creation import asarray
from .protocols import native

__all__ = ["load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt", "fromfile", "frombuffer",
           "fromiter", "NpzFile"]


class NpzFile(Mapping[str, LazyArray]):
    """An ``.npz`` archive (NumPy's ``NpzFile``): ``archive["name"]`` is a stitchlab array, read
    when asked for; ``files`` lists the names; close it, or use it in a ``with`` block."""

    def __init__(self, npz: Any) -> None:
        self._npz = npz
        self.files = list(npz.files)

    def __getitem__(self, key: str) -> LazyArray:
        return asarray(self._npz[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def close(self) -> None:
        self._npz.close()

    def __enter__(self) -> NpzFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def load(file: Any, mmap_mode: Any = None, allow_pickle: bool = False, **kwargs: Any) -> Any:
    """NumPy's ``load``: a ``.npy`` file as a stitchlab array, an ``.npz`` archive as an
    :class:`NpzFile` of them (a pickled object, with ``allow_pickle``, as NumPy returns it).

    Example:
        >>> import numpy as np, stitchlab as sl, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "x.npy")
        >>> sl.save(path, sl.arange(3.0))
        >>> sl.load(path).get()
        array([0., 1., 2.])
    """
    obj = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle, **kwargs)
    if isinstance(obj, np.lib.npyio.NpzFile):
        return NpzFile(obj)
    if isinstance(obj, np.ndarray) and obj.dtype == np.dtype("V2"):
        raise TypeError("sl.load: the file holds raw two-byte records (|V2), as NumPy with ml_dtypes writes a bfloat16 "
                        "array, but the format does not say they are bfloat16; if they are, read them with "
                        "sl.asarray(np.load(file).view(ml_dtypes.bfloat16))")
    return asarray(obj) if isinstance(obj, np.ndarray) and obj.dtype != object else obj


def _no_bfloat16(call: str, *arrays: Any) -> None:
    """Refuse bfloat16 arrays before anything is written: the ``.npy`` format has no bfloat16, and
    NumPy (with ml_dtypes) writes one as raw two-byte records, ``|V2``, which neither ``np.load``
    nor :func:`load` reads back as bfloat16."""
    for a in arrays:
        dtype = getattr(a, "dtype", None)
        if isinstance(dtype, np.dtype) and is_bfloat16(dtype):
            raise TypeError(f"sl.{call}: the .npy format has no bfloat16 (NumPy would write raw |V2 records that load "
                            "cannot read back as bfloat16); save x.astype(np.float32) (exact: every bfloat16 is a "
                            "float32), or the bits np.asarray(x.get()).view(np.uint16) and read them back with "
                            ".view(ml_dtypes.bfloat16)")


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    """NumPy's ``save`` of the evaluated array (a ``.npy`` file NumPy and CuPy read). A bfloat16
    array raises ``TypeError`` (the format has none: save it as float32, exactly)."""
    _no_bfloat16("save", arr)
    np.save(file, native(arr, True), allow_pickle=allow_pickle)


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """NumPy's ``savez`` of the evaluated arrays (``arr_0``..., or the keywords' names); bfloat16
    raises as in :func:`save`."""
    _no_bfloat16("savez", *args, *kwds.values())
    np.savez(file, *native(args, True), **native(kwds, True))


def savez_compressed(file: Any, *args: Any, **kwds: Any) -> None:
    """NumPy's ``savez_compressed`` of the evaluated arrays; bfloat16 raises as in :func:`save`."""
    _no_bfloat16("savez_compressed", *args, *kwds.values())
    np.savez_compressed(file, *native(args, True), **native(kwds, True))


def savetxt(fname: Any, X: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N803 - NumPy's name
    """NumPy's ``savetxt`` of the evaluated array."""
    np.savetxt(fname, native(X, True), *args, **kwargs)


def loadtxt(*args: Any, **kwargs: Any) -> LazyArray:
    """NumPy's ``loadtxt``, as a stitchlab array."""
    return asarray(np.loadtxt(*args, **kwargs))


def genfromtxt(*args: Any, **kwargs: Any) -> LazyArray:
    """NumPy's ``genfromtxt``, as a stitchlab array (missing values as NumPy fills them)."""
    return asarray(np.genfromtxt(*args, **kwargs))


def fromfile(*args: Any, **kwargs: Any) -> LazyArray:
    """NumPy's ``fromfile``, as a stitchlab array."""
    return asarray(np.fromfile(*args, **kwargs))


def frombuffer(*args: Any, **kwargs: Any) -> LazyArray:
    """NumPy's ``frombuffer``, as a stitchlab array (a copy: the buffer is not shared)."""
    return asarray(np.frombuffer(*args, **kwargs).copy())


def fromiter(*args: Any, **kwargs: Any) -> LazyArray:
    """NumPy's ``fromiter``, as a stitchlab array."""
    return asarray(np.fromiter(*args, **kwargs))
