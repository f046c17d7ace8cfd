"""One refusal type (annotation.refusals.Refused) and one 400 body for it (annotation.shared.api.errors):
the three imports that refuse bad lines (a listening form, system outputs, a public dataset)
answer in the same shape, with the clip or item each problem is about under the same key."""

import ast
from pathlib import Path

import pytest

from annotation.refusals import Problem, Refused
from annotation.shared.api.errors import exception_handler
from tests.annotation.test_import_listening_form_items import FormFolder
from tests.api.callers import staff_with, token_client
from tests.api.test_dataset_imports import ADD_LABEL_SET, post, zipped
from tests.api.test_study_writes import WRITES, form_zip
from tests.api.test_systems import ADD, post_outputs
from tests.evaluation.dataset_layouts import emphassess_folder
from tests.evaluation.suites.fixtures import import_stresstest_study, write_jsonl

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "prolific", "evaluation", "modelzoo")
BODY = ("detail", "problems", "more_problems")
PROBLEM = ("file", "line", "where", "item", "field", "reason")


def form_refused(tmp_path: Path) -> dict:
    folder = FormFolder(tmp_path / "pilot")
    folder.stresstest(1)
    folder.stresstest(2, audio="audio/missing.wav")
    api = token_client(staff_with(*WRITES, "annotation.add_listeningformitem"))
    fields = {"file": form_zip(folder.write()), "study_name": "pilot"}
    return _refusal(api.post("/api/v1/studies/form-upload/", fields, format="multipart"))


def outputs_refused(tmp_path: Path) -> dict:
    import_stresstest_study(tmp_path / "stresstest")
    path = write_jsonl(tmp_path / "m1.jsonl", [{"item": "st-404", "answer": 1}])
    return _refusal(post_outputs(token_client(staff_with(ADD)), path, suite="stresstest", system="m1"))


def dataset_refused(tmp_path: Path) -> dict:
    _, audio = emphassess_folder(tmp_path / "up")
    (audio / "emph_001.wav").unlink()
    client = token_client(staff_with(ADD_LABEL_SET))
    fields = {"format": "emphassess", "name": "x", "audio": "audio", "splits": "test"}
    return _refusal(post(client, zipped(tmp_path / "up"), **fields))


def _refusal(response) -> dict:
    assert response.status_code == 400, response.content
    return response.json()


def test_the_three_imports_answer_bad_lines_in_one_shape(tmp_path):
    bodies = {
        "form": form_refused(tmp_path / "form"),
        "outputs": outputs_refused(tmp_path / "outputs"),
        "dataset": dataset_refused(tmp_path / "dataset"),
    }

    shapes = {name: (tuple(body), {tuple(problem) for problem in body["problems"]}) for name, body in bodies.items()}
    assert shapes == dict.fromkeys(bodies, (BODY, {PROBLEM}))
    # The id each problem is about is under `item` in all three (two said `item`, one `clip_id`).
    assert {name: body["problems"][0]["item"] for name, body in bodies.items()} == {
        "form": "missing",  # the form item named after its audio file
        "outputs": "st-404",
        "dataset": "emph_001",
    }


def test_a_refusal_of_no_record_is_its_reason_alone():
    response = exception_handler(Refused("only a final label set can be archived"), {})

    assert (response.status_code, response.data) == (400, {"detail": "only a final label set can be archived"})


def test_problems_past_the_shown_ones_are_counted():
    problems = [Problem(f"bad {line}", where=f"f line {line}", file="f", line=line) for line in range(1, 26)]

    body = exception_handler(Refused("25 bad rows", problems=problems), {}).data

    assert (len(body["problems"]), body["more_problems"]) == (20, 5)
    assert body["problems"][0] == {
        "file": "f",
        "line": 1,
        "where": "f line 1",
        "item": "",
        "field": "",
        "reason": "bad 1",
    }


def test_every_refusal_of_the_apps_is_a_refused():
    # Read, not imported: the modelzoo's services would import the training stack.
    strays = []
    for path in sorted(p for app in APPS for p in (ROOT / app).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Refused") and node.name != "Refused":
                bases = [base.id for base in node.bases if isinstance(base, ast.Name)]
                if not any(base.endswith("Refused") for base in bases):
                    strays.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({', '.join(bases)})")
    assert strays == []
