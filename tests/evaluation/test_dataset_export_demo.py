"""End to end on the demo corpus: import it, annotate its German clips through the real
assignment and submission services, make and finalize a label set, export it in every format,
and read each export back: the labels are the hand count of what the three listeners marked.

Who marks what (the manifest's `intended_emphasis` is the word the generator stressed):
listener 0 gives that word level 2, listener 1 level 1, listener 2 marks the first word (level 1).
So per clip, with i the intended word: word i has levels (2, 1, 0) -> binary 1, scalar 0.5, and
word 0 has (0, 0, 1) -> binary 0, scalar 1/6; when i is 0 it has (2, 1, 1) -> binary 1, scalar 2/3.
Every other word is 0 and 0.
"""

import csv
import io
import json

import pytest
from django.conf import settings

from annotation.models import Clip, Corpus, Study
from annotation.participant_names import opaque_annotator_id
from annotation.services.assignment import assignment_claim
from annotation.services.corpus_import import corpus_import
from annotation.services.studies import ClipSelection, study_create
from annotation.services.submission import annotation_submit
from tests.annotation.study_helpers import first_pending, listened, ready_participant
from tests.evaluation.export_builders import (
    assert_decodes_to,
    exported,
    final_label_set,
    load_audiofolder,
    unzipped,
    zip_entries,
)

pytestmark = pytest.mark.django_db
DEMO = settings.BASE_DIR / "annotation" / "demo_corpus"
LISTENERS = [f"{n:024x}" for n in (0xA1, 0xB2, 0xC3)]


def intended() -> dict[str, int]:
    rows = [json.loads(line) for line in (DEMO / "manifest.jsonl").read_text().splitlines()]
    return {row["id"]: row["intended_emphasis"][0] for row in rows if row["language"] == "de"}


def marks_of(listener: int, words: int, target: int) -> list[int]:
    levels = [0] * words
    if listener == 2:
        levels[0] = 1
    else:
        levels[target] = 2 - listener
    return levels


def hand_count(words: int, target: int) -> list[tuple[int, float]]:
    """(binary, scalar) per word, from the rule in the module's docstring."""
    levels = [[marks_of(listener, words, target)[k] for listener in range(3)] for k in range(words)]
    return [(int(sum(level >= 1 for level in word) * 2 > 3), sum(level / 2 for level in word) / 3) for word in levels]


@pytest.fixture
def study():
    report = corpus_import(path=DEMO, corpus_name="Demo (synthetic, espeak-ng)")
    assert report.created == 64
    study = study_create(
        name="Demo export",
        slug="demo-export",
        corpus=Corpus.objects.get(),
        selection=ClipSelection(languages=["de"]),
        clips_per_task=11,
        target_annotations=3,
        attention_checks_per_task=0,
        status=Study.Status.LIVE,
    )
    targets = intended()
    for listener, pid in enumerate(LISTENERS):
        participant = ready_participant(study, prolific_pid=pid)
        task = assignment_claim(participant=participant)
        for _ in range(task.items.count()):
            item = first_pending(task)
            listened(item)
            levels = marks_of(listener, item.word_count, targets[item.clip.external_id])
            annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=levels, mismatch=False)
    return study


@pytest.fixture
def expected(study) -> dict[str, list[tuple[int, float]]]:
    targets = intended()
    assert len(targets) == 11
    return {key: hand_count(Clip.objects.get(external_id=key).words.count(), target) for key, target in targets.items()}


def test_every_export_of_the_demo_set_holds_the_hand_count(
    study, expected, django_capture_on_commit_callbacks, tmp_path, monkeypatch
):
    label_set = final_label_set(study, django_capture_on_commit_callbacks, name="demo de")
    assert label_set.summary["clips"] == 11 and label_set.summary["annotations"] == 33

    def export(format, **more):
        return exported(django_capture_on_commit_callbacks, format=format, **more)

    clips = [json.loads(line) for line in zip_entries(export("jsonl", label_set=label_set))["clips.jsonl"].splitlines()]
    assert sorted(clip["clip_id"] for clip in clips) == sorted(expected)
    for clip in clips:
        assert_labels([(w["binary"], w["scalar"]) for w in clip["words"]], expected[clip["clip_id"]])

    words = list(csv.DictReader(io.StringIO(zip_entries(export("csv", label_set=label_set))["words.csv"].decode())))
    assert len(words) == sum(len(labels) for labels in expected.values())
    for word in words:
        assert_labels([(word["binary"], word["scalar"])], [expected[word["clip_id"]][int(word["word_index"])]])

    folder = unzipped(export("audiofolder", label_set=label_set), tmp_path / "audiofolder")
    items = [item for split in load_audiofolder(folder, tmp_path, monkeypatch).values() for item in split]
    assert sorted(item["clip_id"] for item in items) == sorted(expected)
    for item in items:
        assert_labels(list(zip(item["binary"], item["scalar"])), expected[item["clip_id"]])
        assert len(item["start"]) == len(item["words"])  # the demo corpus has word times for every clip
        assert_decodes_to(item["audio"], Clip.objects.get(external_id=item["clip_id"]).model_audio.name)

    from praatio import textgrid

    folder = unzipped(export("textgrid", label_set=label_set), tmp_path / "textgrids")
    for key, labels in expected.items():
        grid = textgrid.openTextgrid(str(folder / "textgrids" / f"{key}.TextGrid"), includeEmptyIntervals=False)
        assert [int(e.label) for e in grid.getTier("binary").entries] == [binary for binary, _ in labels]

    raw = zip_entries(export("raw", study=study))["annotations.csv"].decode()
    rows = list(csv.DictReader(io.StringIO(raw)))
    assert len(rows) == 3 * sum(len(labels) for labels in expected.values())
    assert {row["annotator"] for row in rows} == {opaque_annotator_id("demo-export", pid) for pid in LISTENERS}
    targets = intended()
    first = opaque_annotator_id("demo-export", LISTENERS[0])
    for row in rows:
        if row["annotator"] == first:
            assert int(row["level"]) == (2 if int(row["word_index"]) == targets[row["clip_id"]] else 0)


def assert_labels(got: list[tuple], expected: list[tuple[int, float]]) -> None:
    """(binary, scalar) per word, as read back (numbers or CSV text), against the hand count."""
    assert [int(binary) for binary, _ in got] == [binary for binary, _ in expected]
    assert [float(scalar) for _, scalar in got] == pytest.approx([scalar for _, scalar in expected])
