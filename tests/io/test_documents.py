"""The one reader of rankflavor's JSON documents (:mod:`rankflavor.io.documents`): each way a file
fails is an InputError naming the file (unreadable with the OS's reason, invalid JSON at its line,
a value that is not an object), worded as its caller words it; the SHA-256 is of the bytes read."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from rankflavor.errors import InputError
from rankflavor.io.documents import Wording, read_json_document


def test_a_json_object_is_read_with_the_digest_of_its_bytes(tmp_path: Path) -> None:
    raw = b'{"measures": [], "counts": {"n": 1}}\n'
    (tmp_path / "r.json").write_bytes(raw)
    read = read_json_document(tmp_path / "r.json", sha256=True)
    assert read.source == str(tmp_path / "r.json")
    assert read.data == {"measures": [], "counts": {"n": 1}}
    assert read.sha256 == hashlib.sha256(raw).hexdigest()
    assert read_json_document(tmp_path / "r.json").sha256 is None  # hashed only when asked


def test_an_unreadable_file_is_named_with_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(InputError) as info:
        read_json_document(missing)
    assert str(info.value) == f"{missing}: cannot read: {os.strerror(errno.ENOENT)}"
    assert info.value.line is None
    with pytest.raises(InputError) as info:  # a folder is no document either
        read_json_document(tmp_path, Wording(unreadable="cannot read the results file: {reason}"))
    assert str(info.value).startswith(f"{tmp_path}: cannot read the results file: ")


def test_invalid_json_names_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "a": 1,\n  "b": \n}\n')
    with pytest.raises(InputError) as info:
        read_json_document(bad)
    assert info.value.source == str(bad) and info.value.line == 4
    assert str(info.value).startswith(f"{bad}:4: not valid JSON (Expecting value: line 4 column 1")
    with pytest.raises(InputError) as info:  # a caller that names no line words the error its own way
        read_json_document(bad, Wording(invalid="not readable: {error}", line=False))
    assert info.value.line is None and str(info.value).startswith(f"{bad}: not readable: Expecting value")
    (tmp_path / "latin.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(InputError, match=r"latin\.json: not valid JSON \('utf-8' codec can't decode"):
        read_json_document(tmp_path / "latin.json")


@pytest.mark.parametrize("text", ["[1, 2]", '"results"', "null", "3"])
def test_a_value_that_is_not_an_object_is_refused(tmp_path: Path, text: str) -> None:
    (tmp_path / "v.json").write_text(text)
    with pytest.raises(InputError) as info:
        read_json_document(tmp_path / "v.json")
    assert str(info.value) == f"{tmp_path / 'v.json'}: not a JSON object"
    with pytest.raises(InputError, match=r"v\.json: not a saved comparison$"):
        read_json_document(tmp_path / "v.json", Wording(not_object="not a saved comparison"))


def test_text_mode_reads_as_a_file_opened_as_utf8_text(tmp_path: Path) -> None:
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf{}")
    assert read_json_document(bom).data == {}  # json.loads of the bytes skips a byte-order mark
    with pytest.raises(InputError, match="Unexpected UTF-8 BOM"):
        read_json_document(bom, text=True)
    crlf = tmp_path / "crlf.json"
    crlf.write_bytes(b'{\r\n"a":\r\n}')
    with pytest.raises(InputError, match=r"line 3 column 1 \(char 7\)"):  # "\r\n" read as one "\n" (char 9 in bytes)
        read_json_document(crlf, text=True)
