"""Archives and folders are untrusted: escapes, links and bombs are refused."""

import os
import stat
import warnings
import zipfile

import pytest

from annotation.ingest.errors import SourceRefused
from annotation.ingest.source import Limits, extract_zip, open_source

LIMITS = Limits(max_archive_bytes=10_000_000, max_file_bytes=5_000_000, max_files=100, max_clip_seconds=60)


def make_zip(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, data in members.items():
            bundle.writestr(name, data)
    return path


def refusal(path, limits=LIMITS) -> str:
    with pytest.raises(SourceRefused) as caught, open_source(path, limits):
        pass
    return str(caught.value)


def test_manifest_found_at_the_root_or_in_a_single_folder(tmp_path):
    for layout in ({"manifest.jsonl": b"{}"}, {"corpus/manifest.csv": b"a"}):
        archive = make_zip(tmp_path / "c.zip", layout)
        with open_source(archive, LIMITS) as source:
            assert source.manifest.name in ("manifest.jsonl", "manifest.csv")
            assert source.manifest.is_file()


def test_temporary_extraction_is_removed(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {"manifest.jsonl": b"{}"})
    with open_source(archive, LIMITS) as source:
        root = source.root
    assert not root.exists()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.wav", "entry '../evil.wav' escapes its folder with '..'"),
        ("a/../../evil.wav", "escapes its folder"),
        ("/etc/evil.wav", "has an absolute path"),
        ("C:/evil.wav", "has an absolute path"),
    ],
)
def test_paths_escaping_the_archive_are_refused(tmp_path, name, reason):
    archive = make_zip(tmp_path / "c.zip", {"manifest.jsonl": b"{}", name: b"x"})
    assert reason in refusal(archive)


def test_links_in_the_archive_are_refused(tmp_path):
    archive = tmp_path / "c.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("manifest.jsonl", "{}")
        link = zipfile.ZipInfo("audio/a.wav")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(link, "/etc/passwd")
    assert "entry 'audio/a.wav' is a link" in refusal(archive)


def test_zip_bomb_is_refused_by_counting_real_bytes(tmp_path):
    archive = make_zip(
        tmp_path / "bomb.zip", {"manifest.jsonl": b"{}", **{f"f{i}.wav": b"\0" * 4_000_000 for i in range(4)}}
    )
    assert archive.stat().st_size < 100_000
    assert "bytes uncompressed; the limit is 10000000 (IMPORT_MAX_ARCHIVE_BYTES)" in refusal(archive)


def test_member_over_the_file_limit_is_refused(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {"manifest.jsonl": b"{}", "big.wav": b"\0" * 6_000_000})
    assert "entry 'big.wav' declares 6000000 bytes; the limit is 5000000 (IMPORT_MAX_FILE_BYTES)" in refusal(archive)


def test_too_many_members_are_refused(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {f"{i}.txt": b"" for i in range(101)})
    assert "holds 101 entries; the limit is 100 (IMPORT_MAX_FILES)" in refusal(archive)


def test_missing_manifest_and_non_archives_are_refused(tmp_path):
    assert "no manifest.jsonl or manifest.csv" in refusal(make_zip(tmp_path / "c.zip", {"x.wav": b""}))
    (tmp_path / "notes.txt").write_text("hi")
    assert "not a folder or a .zip archive" in refusal(tmp_path / "notes.txt")
    assert "no such folder or file" in refusal(tmp_path / "missing")


def test_a_folder_with_both_manifests_is_ambiguous(tmp_path):
    (tmp_path / "manifest.jsonl").write_text("{}")
    (tmp_path / "manifest.csv").write_text("a")
    assert "holds both manifest.jsonl and manifest.csv" in refusal(tmp_path)


def test_linked_folder_inside_a_corpus_folder_is_refused(tmp_path):
    from annotation.ingest.source import resolve_audio_path

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.wav").write_bytes(b"RIFF")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    os.symlink(outside, corpus / "audio")
    with pytest.raises(ValueError, match="goes through a link"):
        resolve_audio_path(corpus, corpus, "audio/a.wav", LIMITS)


def lie_about_sizes(path, *, member: str, declared: int) -> None:
    """Rewrite `member`'s uncompressed size, in its local header and in the central directory,
    to `declared`: a crafted archive whose header lies about how far it expands."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as bundle:
        info = bundle.getinfo(member)
    name = member.encode()
    local = info.header_offset  # local file header: size at offset 22
    assert data[local : local + 4] == b"PK\x03\x04"
    data[local + 22 : local + 26] = declared.to_bytes(4, "little")
    central = data.index(b"PK\x01\x02")
    while data[central + 46 : central + 46 + len(name)] != name:
        central = data.index(b"PK\x01\x02", central + 4)
    data[central + 24 : central + 28] = declared.to_bytes(4, "little")  # central header: size at offset 24
    path.write_bytes(bytes(data))


def test_a_bomb_is_refused_from_its_declared_sizes_before_anything_is_written(tmp_path):
    # Each member fits the file limit; together they declare 16 MB against a 10 MB limit.
    archive = make_zip(
        tmp_path / "bomb.zip", {"manifest.jsonl": b"{}", **{f"f{i}.wav": b"\0" * 4_000_000 for i in range(4)}}
    )
    target = tmp_path / "out"
    target.mkdir()

    with pytest.raises(SourceRefused) as caught:
        extract_zip(archive, target, LIMITS)

    assert "declares 16000002 bytes uncompressed; the limit is 10000000 (IMPORT_MAX_ARCHIVE_BYTES)" in str(caught.value)
    assert list(target.rglob("*")) == [], "nothing is extracted before the refusal"


def test_a_member_declared_over_the_file_limit_is_refused_before_extracting(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {"manifest.jsonl": b"{}", "big.wav": b"\0" * 6_000_000})
    target = tmp_path / "out"
    target.mkdir()

    with pytest.raises(SourceRefused, match=r"entry 'big.wav' declares 6000000 bytes; the limit is 5000000"):
        extract_zip(archive, target, LIMITS)
    assert list(target.rglob("*")) == []


def test_a_header_that_lies_about_its_size_is_refused_while_extracting(tmp_path):
    # The header says 1 kB; the data expands to 6 MB, past the 5 MB file limit.
    archive = make_zip(tmp_path / "liar.zip", {"manifest.jsonl": b"{}", "liar.wav": b"\0" * 6_000_000})
    lie_about_sizes(archive, member="liar.wav", declared=1000)
    with zipfile.ZipFile(archive) as bundle:
        assert bundle.getinfo("liar.wav").file_size == 1000  # the declared sizes pass the first check

    message = refusal(archive)

    assert "entry 'liar.wav'" in message and "does not match its header" in message


def test_bytes_are_still_counted_while_extracting(tmp_path, monkeypatch):
    # The second line of defence, should the declared sizes be passed: the bytes written are counted.
    import annotation.ingest.source as source

    monkeypatch.setattr(source, "check_declared_sizes", lambda *args: None)
    archive = make_zip(
        tmp_path / "bomb.zip", {"manifest.jsonl": b"{}", **{f"f{i}.wav": b"\0" * 4_000_000 for i in range(4)}}
    )
    assert "expands past 10000000 bytes (IMPORT_MAX_ARCHIVE_BYTES)" in refusal(archive)


# -- names that cannot all be extracted (issue 30: each answered 500 before) ------------------------


def extract_refusal(path, name=None) -> str:
    with pytest.raises(SourceRefused) as caught:
        extract_zip(path, path.parent / "out", LIMITS, name=name)
    assert not (path.parent / "out").exists() or not any((path.parent / "out").rglob("*"))  # nothing extracted
    return str(caught.value)


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        (
            [("audio/x", b"a"), ("audio/x/y.wav", b"b")],
            "entry 'audio/x' is a file, but 'audio/x/y.wav' needs a folder of that name",
        ),
        (
            [("audio/x/y.wav", b"b"), ("audio/x", b"a")],
            "entry 'audio/x' is a file, but 'audio/x/y.wav' needs a folder of that name",
        ),
        ([("audio/", b""), ("audio", b"a")], "entry 'audio' is a file, but 'audio/' needs a folder of that name"),
        ([("a.wav", b"1"), ("a.wav", b"2")], "entry 'a.wav' is named twice"),
        ([("a.wav", b"1"), ("./a.wav", b"2")], "entry './a.wav' is named twice"),
        ([("a" * 256 + ".wav", b"1")], "has a name of 260 bytes; at most 255 are taken"),
        ([("é" * 128 + ".wav", b"1")], "has a name of 260 bytes; at most 255 are taken"),  # bytes, not characters
        ([("d/" * 520 + "a.wav", b"1")], "has a path of 1045 characters; at most 1024 are taken"),
    ],
)
def test_names_that_cannot_all_be_extracted_are_refused_before_any_is(tmp_path, members, reason):
    archive = tmp_path / "c.zip"
    with zipfile.ZipFile(archive, "w") as bundle, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name, and writes it
        for name, data in members:
            bundle.writestr(name, data)

    assert reason in extract_refusal(archive, name="upload.zip")


def test_a_name_of_255_bytes_is_taken(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {"a" * 251 + ".wav": b"1"})
    extract_zip(archive, tmp_path / "out", LIMITS)
    assert (tmp_path / "out" / ("a" * 251 + ".wav")).read_bytes() == b"1"


def test_a_file_that_is_not_a_zip_is_refused_by_the_name_it_was_uploaded_under(tmp_path):
    archive = tmp_path / "tmpa8s7.upload"
    archive.write_bytes(b"PK\x03\x04 but nothing after it")

    message = extract_refusal(archive, name="dataset.zip")

    assert message.startswith("dataset.zip: not a .zip archive") and "tmpa8s7" not in message


def test_an_entry_compressed_in_a_way_zipfile_cannot_read_is_refused(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {"a.wav": b"1" * 100})
    raw = bytearray(archive.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # method 8 (deflate) -> 99 (AES)
        position = raw.find(signature)
        raw[position + offset : position + offset + 2] = (99).to_bytes(2, "little")
    archive.write_bytes(bytes(raw))

    assert "entry 'a.wav' is compressed with method 99, which cannot be read" in extract_refusal(archive)
