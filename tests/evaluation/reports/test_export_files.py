"""The pure parts of dataset exports: the reproducible zip, the data card's lines, file names,
and the audiofolder metadata's stable column types. No database."""

import io
import os
import zipfile

from evaluation.reports.export_cards import agreement_lines, left_out_lines
from evaluation.reports.label_set_files import audiofolder_metadata, data_card, has_word_times, safe_file_stem
from evaluation.reports.zip_archive import zip_folder

CLIP = {
    "clip_id": "c1",
    "split": "validation",
    "language": "en",
    "variety": "en-GB",
    "speaker": "s1",
    "emotion": "calm",
    "arousal": "low",
    "scale_step": None,
    "duration": 1.0,
    "annotators": ["a-1", "a-2"],
    "words": [
        {"index": 0, "text": "hi", "start": 0.1, "end": 0.4, "binary": True, "scalar": 1, "levels": [2, 2]},
        {"index": 1, "text": "there", "start": None, "end": None, "binary": False, "scalar": 0.0, "levels": [0, 0]},
    ],
}


def write_files(folder, names):
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"content of {name}\n" * 50)


def test_the_same_files_give_the_same_zip_whatever_their_times_and_listing_order(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write_files(first, ["b.txt", "a/z.jsonl", "a/audio.wav", "README.md"])
    write_files(second, ["README.md", "a/audio.wav", "b.txt", "a/z.jsonl"])
    os.utime(second / "b.txt", (0, 10**9))

    assert zip_folder(first, tmp_path / "1.zip") == 4
    zip_folder(second, tmp_path / "2.zip")

    assert (tmp_path / "1.zip").read_bytes() == (tmp_path / "2.zip").read_bytes()
    with zipfile.ZipFile(io.BytesIO((tmp_path / "1.zip").read_bytes())) as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == ["README.md", "a/audio.wav", "a/z.jsonl", "b.txt"]
        assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
        assert {i.filename: i.compress_type for i in infos}["a/audio.wav"] == zipfile.ZIP_STORED
        assert {i.filename: i.compress_type for i in infos}["b.txt"] == zipfile.ZIP_DEFLATED
        assert archive.read("a/z.jsonl") == (first / "a/z.jsonl").read_bytes()


def test_file_stems_are_safe_and_distinct():
    assert safe_file_stem("clip-01_a.b") == "clip-01_a.b"
    odd = safe_file_stem("en/clip 1")
    assert odd.startswith("en_clip_1-") and "/" not in odd
    assert safe_file_stem("en/clip 1") != safe_file_stem("en_clip_1") != safe_file_stem("en_clip 1")
    assert safe_file_stem("..").startswith("clip-")


def test_audiofolder_columns_keep_one_type_in_every_split():
    row = audiofolder_metadata(CLIP, "c1.wav", word_times=False)

    assert row["scale_step"] == 0  # not null: a split of nulls would get a type of its own
    assert "start" not in row and "end" not in row
    assert row["binary"] == [1, 0] and row["scalar"] == [1.0, 0.0] and isinstance(row["scalar"][0], float)
    timed = {**CLIP, "words": [CLIP["words"][0]]}
    assert audiofolder_metadata(timed, "c1.wav")["start"] == [0.1]
    assert not has_word_times(CLIP) and has_word_times(timed) and not has_word_times({**CLIP, "words": []})


def test_card_lines_are_sorted_and_name_what_was_left_out():
    figures = {
        "clips": 3,
        "words": 20,
        "annotators": 4,
        "cohen": 0.51234,
        "fleiss": None,
        "fleiss_ci95": None,
        "alpha_ordinal": 0.4,
        "alpha_ordinal_ci95": [0.1, 0.6],
    }
    lines = agreement_lines(
        {"s2": {"pooled": figures, "language": {}}, "s1": {"pooled": figures, "language": {"": figures}}}
    )
    assert list(lines) == ["s1, all languages", "s1, (none)", "s2, all languages"]
    assert lines["s1, all languages"] == (
        "3 clips, 20 words, 4 annotators; mean pairwise Cohen's kappa 0.5123; Fleiss' kappa undefined; "
        "Krippendorff's alpha (ordinal) 0.4000 (95 % CI 0.1000 to 0.6000)"
    )
    left = left_out_lines(
        {
            "s1": {
                "clips_excluded_in_review": 2,
                "clips_short": [{"clip": "b", "annotations": 1}, {"clip": "a", "annotations": 2}],
                "annotators_excluded": [{"annotator": "a-9", "flags": ["low kappa"], "failed_checks": True}],
                "annotations_left_out_by_source": {"annotations of rejected participants": 7},
            }
        }
    )
    assert left == [
        "s1: 2 clip(s) excluded in review",
        "s1: 2 clip(s) with fewer annotations than the subsample: a (2), b (1)",
        "s1: annotator a-9 excluded (low kappa, failed attention checks)",
        "s1: 7 annotations of rejected participants",
    ]
    card = data_card(title="T", facts={"k": "v"}, counts={}, agreement={}, files="- f", left_out=left)
    assert "## Left out\n\n- s1: 2 clip(s) excluded in review" in card
