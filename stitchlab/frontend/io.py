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
    return asarray(obj) if isinstance(obj, np.ndarray) and obj.dtype != object else obj


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    """NumPy's ``save`` of the evaluated array (a ``.npy`` file NumPy and CuPy read)."""
    np.save(file, native(arr, True), allow_pickle=allow_pickle)


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """NumPy's ``savez`` of the evaluated arrays (``arr_0``..., or the keywords' names)."""
    np.savez(file, *native(args, True), **native(kwds, True))


def savez_compressed(file: Any, *args: Any, **kwds: Any) -> None:
    """NumPy's ``savez_compressed`` of the evaluated arrays."""
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
