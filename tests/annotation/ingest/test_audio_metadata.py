"""The files made from a source keep none of its tags (issue 15): participants
must not learn a clip's title, speaker or notes from the audio they are served."""

import subprocess

import pytest

from annotation.ingest.audio import FFMPEG, process_audio

TAGS = {"title": "angry take 3", "artist": "speaker F07", "comment": "emphasis on STOLE"}


def tags_of(path) -> str:
    result = subprocess.run(
        [FFMPEG, "-v", "error", "-i", str(path), "-f", "ffmetadata", "-"], capture_output=True, check=True
    )
    return result.stdout.decode()


@pytest.mark.parametrize("source_format", ["mp3", "wav", "flac"])
def test_derived_files_carry_no_metadata(tmp_path, source_format):
    source = tmp_path / f"source.{source_format}"
    metadata = [arg for name, value in TAGS.items() for arg in ("-metadata", f"{name}={value}")]
    subprocess.run(
        [FFMPEG, "-v", "error", "-f", "lavfi", "-i", "sine=frequency=220:duration=1.5", *metadata, str(source)],
        check=True,
    )
    assert "speaker F07" in tags_of(source)

    processed = process_audio(source, tmp_path / "out", max_seconds=30, word_times=[])

    for derived in (processed.browser_mp3, processed.model_wav):
        found = tags_of(derived)
        assert not any(value in found for value in TAGS.values()), found
        assert "title=" not in found and "artist=" not in found and "comment=" not in found
