"""Compressed inputs: gzip, bz2, xz and zstd, recognised by their magic numbers, not their names.

gzip, bz2 and xz are decompressed by the standard library (:mod:`gzip`, :mod:`bz2`,
:mod:`lzma`); zstd by pyarrow's public codec (``pyarrow.CompressedInputStream``), so no other
package is needed. A file that starts like one of them and does not decompress is an
:class:`~rankflavor.errors.InputError` naming the file.

References
----------
.. [GZ] RFC 1952 (gzip: ``1f 8b``); bzip2 (``BZh``); the .xz file format 1.1.0 (``fd 37 7a 58 5a 00``);
   RFC 8878 (Zstandard frame: ``28 b5 2f fd``).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib

from rankflavor.errors import InputError

#: Magic numbers of the compressed formats read, by codec name.
MAGIC: dict[str, bytes] = {
    "gzip": b"\x1f\x8b",
    "bz2": b"BZh",
    "xz": b"\xfd7zXZ\x00",
    "zstd": b"\x28\xb5\x2f\xfd",
}
#: File name endings of the compressed formats (the writers choose the codec by them).
SUFFIXES: dict[str, str] = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}


def codec_of(head: bytes) -> str | None:
    """The codec whose magic number ``head`` (a file's first bytes) starts with, or None.

    Examples
    --------
    >>> codec_of(gzip.compress(b"q1 0 d 1")), codec_of(b"q1 0 d 1")
    ('gzip', None)
    """
    for name, magic in MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def decompress(source: str, data: bytes) -> bytes:
    """``data`` decompressed when it starts with a codec's magic number, else as it is.

    Raises
    ------
    InputError
        Naming ``source`` when the compressed data is corrupt or truncated.

    Examples
    --------
    >>> decompress("r.txt.xz", lzma.compress(b"q1 Q0 d 1 2.0 t\\n"))
    b'q1 Q0 d 1 2.0 t\\n'
    """
    codec = codec_of(data[:6])
    if codec is None:
        return data
    try:
        if codec == "gzip":
            return gzip.decompress(data)
        if codec == "bz2":
            return bz2.decompress(data)
        if codec == "xz":
            return lzma.decompress(data)
        return _zstd(data)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:  # zlib.error is no OSError
        raise InputError(source, None, f"{codec} data is corrupt: {exc}") from None


def _zstd(data: bytes) -> bytes:
    import pyarrow as pa

    try:
        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
            return stream.read()
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(str(exc)) from None


def compress(data: bytes, codec: str) -> bytes:
    """``data`` compressed by ``codec`` (a name of :data:`MAGIC`).

    Examples
    --------
    >>> decompress("x", compress(b"abc", "zstd"))
    b'abc'
    """
    if codec == "gzip":
        return gzip.compress(data, mtime=0)  # no time stamp: the same input gives the same bytes
    if codec == "bz2":
        return bz2.compress(data)
    if codec == "xz":
        return lzma.compress(data)
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:
        stream.write(data)
    return sink.getvalue().to_pybytes()


def other_codec(path: object) -> bool:
    """Is the file compressed by a codec other than gzip (the TREC columnar path reads gzip
    itself; the others are decompressed into memory first)? False when it cannot be read."""
    try:
        with open(path, "rb") as fh:  # type: ignore[call-overload]
            codec = codec_of(fh.read(6))
    except (OSError, TypeError):
        return False
    return codec is not None and codec != "gzip"
