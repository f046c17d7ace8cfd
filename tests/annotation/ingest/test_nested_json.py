"""JSON nested too deeply for the parser is refused with a message, wherever an
upload or a form carries JSON (issue 15): never a RecursionError (500)."""

import pytest

from annotation.forms import ImportUploadForm
from annotation.ingest.listening_form_rows import read_items
from annotation.ingest.manifest import _read_csv, _read_jsonl

NESTED = "[" * 50000 + "]" * 50000


def test_a_deeply_nested_form_item_row_is_a_problem_of_its_line(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(NESTED + "\n")

    drafts, problems = read_items(path)

    assert not drafts and [(problem.line, "nested" in problem.reason) for problem in problems] == [(1, True)]


def test_a_deeply_nested_manifest_row_is_a_problem_of_its_line(tmp_path):
    path = tmp_path / "manifest.jsonl"
    path.write_text('{"id": "ok", "audio": "a.wav", "transcript": "hi"}\n' + NESTED + "\n")

    assert "nested" in _read_jsonl(path)[1][1].reason


def test_deeply_nested_words_in_a_csv_manifest_are_a_problem_of_their_line(tmp_path):
    path = tmp_path / "manifest.csv"
    path.write_text("id,audio,transcript,words\nok,a.wav,hi,\n" + f"b,b.wav,hi,{NESTED}\n")

    assert "nested" in _read_csv(path)[1][1].reason


def test_deeply_nested_folder_paths_are_a_form_error():
    form = ImportUploadForm()
    with pytest.raises(Exception, match="folder's file paths"):
        form._folder_paths(NESTED, 1)
