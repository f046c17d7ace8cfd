"""import_system_outputs for StressTest and StanceBench answers: what is stored, every refusal, atomicity."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.ingest.errors import ImportRefused
from evaluation.ingest import system_outputs as reading
from evaluation.models import System, SystemOutput
from evaluation.services.system_outputs import OutputsRefused, system_outputs_import
from tests.evaluation.suites.fixtures import (
    STANCE_ITEMS,
    import_stance_study,
    import_stresstest_study,
    stance_outputs,
    stresstest_outputs,
    write_jsonl,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def stresstest(tmp_path):
    return import_stresstest_study(tmp_path / "stresstest")


@pytest.fixture
def stance(tmp_path):
    return import_stance_study(tmp_path / "stance")


def run(path, *args):
    call_command("import_system_outputs", str(path), *args)


def refused(path, *args) -> str:
    with pytest.raises(CommandError) as caught:
        run(path, *args)
    return str(caught.value)


def stored(system="m1") -> list[tuple]:
    outputs = SystemOutput.objects.filter(system__name=system).order_by("line")
    return [(o.form_item.external_id, o.pole_order, o.raw, o.line) for o in outputs]


# -- what is stored ------------------------------------------------------------------------------


def test_stresstest_answers_are_stored_exactly_as_given(stresstest, tmp_path, capsys):
    path = write_jsonl(tmp_path / "m1.jsonl", stresstest_outputs())
    run(path, "--suite", "stresstest", "--system", "m1", "--version", "2024-06")

    assert stored() == [
        ("st-001", "", 0, 1),
        ("st-001-ssd", "", [0], 2),
        ("st-002", "", "I only implied it", 3),
        ("st-002-ssd", "", [2], 4),
        ("st-003", "", "She took something else", 5),
        ("st-003-ssd", "", "money", 6),
    ]
    system = System.objects.get(name="m1")
    assert (system.kind, system.version) == ("model", "2024-06")
    assert set(SystemOutput.objects.values_list("suite", flat=True)) == {"stresstest"}
    assert "6 stresstest output(s) for 6 item(s) of stresstest-pilot" in capsys.readouterr().out


def test_an_unparseable_answer_is_kept_for_the_score_to_count(stresstest, tmp_path):
    rows = [
        {"item": "st-001", "answer": 7},
        {"item": "st-002", "answer": "no idea"},
        {"item": "st-003", "answer": ["a", "list"]},
        {"item": "st-001-ssd", "answer": ""},
    ]
    run(write_jsonl(tmp_path / "m1.jsonl", rows), "--suite", "stresstest", "--system", "m1")

    assert [raw for _, _, raw, _ in stored()] == [7, "no idea", ["a", "list"], ""]


def test_stance_answers_keep_both_pole_orders_as_given(stance, tmp_path):
    path = write_jsonl(tmp_path / "judge.jsonl", stance_outputs())
    summary = system_outputs_import(path=path, suite="stance", system_name="judge", study=stance)

    assert summary == {
        "system": "judge",
        "system_id": System.objects.get().pk,
        "suite": "stance",
        "file": "judge.jsonl",
        "studies": [stance.slug],
        "outputs": 8,
        "items": 4,
        "replaced": 0,
    }
    rows = stored("judge")
    assert [(item, order) for item, order, _, _ in rows[:2]] == [("warm-01", "PN"), ("warm-01", "NP")]
    assert rows[0][2] == json.dumps({"choice": "P", "confidence": 0.8, "evidence": ["tone"]})  # the text as given
    assert rows[1][2] == {"choice": "P", "confidence": 0.8, "evidence": ["tone"]}
    assert System.objects.get().kind == "judge"


# -- refusals: the file names the line and the field ---------------------------------------------


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"item": "st-404", "answer": 1}, "line 1 (item 'st-404'), item: unknown item 'st-404'"),
        ({"item": "st-001", "stressed": [1]}, "line 1 (item 'st-001'), stressed: item 'st-001' is single_choice"),
        ({"item": "st-001-ssd", "stressed": [0, 7]}, "stressed: word indices [7] are out of range: the item has 7"),
        ({"item": "st-001-ssd", "stressed": [-1]}, "stressed: must be a list of word indices"),
        ({"item": "st-001", "answer": None}, "answer: answer is null"),
        ({"item": "st-001", "anwser": 1}, "line 1 (item 'st-001'), anwser: unknown field 'anwser'"),
        ({"item": "st-001", "answer": 1, "stressed": [1]}, 'answer: give "answer"'),
        ({"item": "st-001", "answer": 1, "order": "PN"}, "order: unknown field 'order'"),
        ({"answer": 1}, "line 1, item: missing item id"),
    ],
)
def test_a_bad_stresstest_line_is_refused_naming_line_and_field(stresstest, tmp_path, row, message):
    path = write_jsonl(tmp_path / "m1.jsonl", [row])
    error = refused(path, "--suite", "stresstest", "--system", "m1")

    assert error.startswith("m1.jsonl: 1 bad row(s), nothing was imported")
    assert message in error
    assert not System.objects.exists() and not SystemOutput.objects.exists()


def test_answers_of_the_wrong_suite_are_refused(stresstest, stance, tmp_path):
    stance_answer = write_jsonl(tmp_path / "a.jsonl", [{"item": "st-001", "order": "PN", "answer": "{}"}])
    assert "item 'st-001' is a single_choice item; stance answers stance items" in refused(
        stance_answer, "--suite", "stance", "--system", "j"
    )
    stresstest_answer = write_jsonl(tmp_path / "b.jsonl", [{"item": "warm-01", "answer": 1}])
    assert "item 'warm-01' is a stance item; stresstest answers single_choice or stressed_words items" in refused(
        stresstest_answer, "--suite", "stresstest", "--system", "m"
    )


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"item": "warm-01", "order": "pn", "answer": "{}"}, "line 1 (item 'warm-01'), order: must be \"PN\""),
        ({"item": "warm-01", "answer": "{}"}, 'order: must be "PN" (positive pole shown first) or "NP", not null'),
        ({"item": "warm-01", "order": "NP"}, "answer: missing answer"),
    ],
)
def test_a_bad_stance_line_is_refused(stance, tmp_path, row, message):
    assert message in refused(write_jsonl(tmp_path / "j.jsonl", [row]), "--suite", "stance", "--system", "j")


def test_duplicate_item_and_order_lines_are_refused(stance, stresstest, tmp_path):
    rows = [
        {"item": "warm-01", "order": "PN", "answer": "a"},
        {"item": "warm-01", "order": "NP", "answer": "b"},
        {"item": "warm-01", "order": "PN", "answer": "c"},
    ]
    error = refused(write_jsonl(tmp_path / "j.jsonl", rows), "--suite", "stance", "--system", "j")
    assert "line 3 (item 'warm-01'), item: item 'warm-01' in order PN again; first on line 1" in error

    rows = [{"item": "st-001", "answer": 1}, {"item": "st-001", "answer": 2}]
    error = refused(write_jsonl(tmp_path / "m.jsonl", rows), "--suite", "stresstest", "--system", "m")
    assert "line 2 (item 'st-001'), item: item 'st-001' again; first on line 1" in error


def test_invalid_json_and_every_problem_up_to_twenty_then_a_count(stresstest, tmp_path):
    lines = ["{not json"] + [json.dumps({"item": f"x{n}", "answer": 1}) for n in range(24)]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(lines))
    error = refused(path, "--suite", "stresstest", "--system", "m")

    assert "m.jsonl: 25 bad row(s), nothing was imported" in error
    assert "line 1: not valid JSON" in error
    assert "line 20 (item 'x18')" in error and "line 21 (item" not in error
    assert "... and 5 more problem(s)" in error


def test_size_limits_of_the_file_and_of_a_field(stresstest, tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "m.jsonl", [{"item": "st-001", "answer": "x" * 20_001}])
    assert "line 1 (item 'st-001'), answer: too long (20001 characters; at most 20000)" in refused(
        path, "--suite", "stresstest", "--system", "m"
    )
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 10)
    assert "m.jsonl is 20" in refused(path, "--suite", "stresstest", "--system", "m")


def test_an_empty_or_missing_file_is_refused(stresstest, tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n\n")
    assert "empty.jsonl: no rows" in refused(tmp_path / "empty.jsonl", "--suite", "stresstest", "--system", "m")
    assert "no such file" in refused(tmp_path / "none.jsonl", "--suite", "stresstest", "--system", "m")


# -- a system's outputs already there ------------------------------------------------------------


def test_outputs_already_there_are_refused_without_replace_and_replaced_with_it(stresstest, tmp_path):
    run(write_jsonl(tmp_path / "v1.jsonl", stresstest_outputs()), "--suite", "stresstest", "--system", "m1")
    second = write_jsonl(tmp_path / "v2.jsonl", stresstest_outputs(wrong=True)[:2])

    error = refused(second, "--suite", "stresstest", "--system", "m1")
    assert "system 'm1' already has answers to study 'stresstest-pilot'" in error and "--replace" in error
    assert len(stored()) == 6

    run(second, "--suite", "stresstest", "--system", "m1", "--replace", "--version", "2")
    assert stored() == [("st-001", "", 1, 1), ("st-001-ssd", "", [1], 2)]
    assert System.objects.get(name="m1").version == "2"


def test_another_study_or_suite_of_the_same_system_is_no_conflict(stresstest, stance, tmp_path):
    run(write_jsonl(tmp_path / "m.jsonl", stresstest_outputs()), "--suite", "stresstest", "--system", "m1")
    run(write_jsonl(tmp_path / "j.jsonl", stance_outputs()), "--suite", "stance", "--system", "m1", "--kind", "model")

    assert SystemOutput.objects.filter(system__name="m1").count() == 6 + 2 * len(STANCE_ITEMS)


def test_a_system_of_another_kind_or_version_is_refused(stresstest, tmp_path):
    System.objects.create(name="m1", kind="judge", version="1")
    path = write_jsonl(tmp_path / "m.jsonl", stresstest_outputs())

    assert "system 'm1' is a judge system, not model" in refused(
        path, "--suite", "stresstest", "--system", "m1", "--kind", "model"
    )
    assert "system 'm1' is version '1', not '2'" in refused(
        path, "--suite", "stresstest", "--system", "m1", "--version", "2"
    )
    assert not SystemOutput.objects.exists()


def test_free_metadata_is_stored_then_merged_key_by_key(stresstest, tmp_path):
    path = write_jsonl(tmp_path / "m.jsonl", stresstest_outputs())
    run(path, "--suite", "stresstest", "--system", "m1", "--metadata", '{"prompt": "p1", "checkpoint": "/ckpt/a"}')
    run(path, "--suite", "stresstest", "--system", "m1", "--replace", "--metadata", '{"prompt": "p2"}')

    assert System.objects.get(name="m1").metadata == {"prompt": "p2", "checkpoint": "/ckpt/a"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "the system metadata must be a JSON object, not list"),
        ("{prompt: 1}", "the system metadata is not valid JSON: Expecting property name"),
        ("[" * 50000 + "]" * 50000, "the system metadata is not valid JSON: nested too deeply"),
        (json.dumps({"notes": "x" * 70000}), "the system metadata is 70013 bytes as JSON; the limit is 65536"),
    ],
)
def test_bad_metadata_is_refused_and_nothing_is_written(stresstest, tmp_path, text, message):
    path = write_jsonl(tmp_path / "m.jsonl", stresstest_outputs())

    assert message in refused(path, "--suite", "stresstest", "--system", "m1", "--metadata", text)
    assert not System.objects.exists() and not SystemOutput.objects.exists()


# -- which study --------------------------------------------------------------------------------


def test_an_item_id_in_two_studies_needs_the_study(stresstest, tmp_path):
    other = import_stresstest_study(tmp_path / "again", name="stresstest copy")
    path = write_jsonl(tmp_path / "m.jsonl", [{"item": "st-001", "answer": 0}])

    error = refused(path, "--suite", "stresstest", "--system", "m")
    assert (
        "item 'st-001' is in several studies (study 'stresstest-copy', study 'stresstest-pilot'); give --study" in error
    )

    run(path, "--suite", "stresstest", "--system", "m", "--study", other.slug)
    assert SystemOutput.objects.get().form_item.study == other
    assert "no study with the slug 'nope'" in refused(path, "--suite", "stresstest", "--system", "n", "--study", "nope")


def test_arguments_that_do_not_fit_the_suite_are_refused(stresstest, tmp_path):
    path = write_jsonl(tmp_path / "m.jsonl", stresstest_outputs())
    with pytest.raises(OutputsRefused, match="not of a CAST set"):
        system_outputs_import(path=path, suite="stresstest", system_name="m", cast_set=object())
    with pytest.raises(OutputsRefused, match="need the CAST set"):
        system_outputs_import(path=path, suite="cast", system_name="m")
    with pytest.raises(OutputsRefused, match="system name must be non-empty"):
        system_outputs_import(path=path, suite="stresstest", system_name=" ")
    with pytest.raises(ImportRefused):
        system_outputs_import(
            path=write_jsonl(tmp_path / "x.jsonl", [{"item": "x", "answer": 1}]), suite="stresstest", system_name="m"
        )
    assert not System.objects.exists()


def test_an_import_racing_another_is_refused_with_a_word_and_writes_nothing(stresstest, tmp_path, monkeypatch):
    """Both passed the "already there" check; the database's unique constraint stops the second."""
    path = write_jsonl(tmp_path / "v1.jsonl", stresstest_outputs())
    original = SystemOutput.objects.bulk_create

    def the_other_import_wins(objs, *args, **kwargs):
        objs = list(objs)
        original(
            [
                SystemOutput(
                    system=objs[0].system,
                    suite=o.suite,
                    form_item=o.form_item,
                    pole_order=o.pole_order,
                    raw="the other",
                    line=0,
                )
                for o in objs[:1]
            ]
        )
        return original(objs, *args, **kwargs)

    monkeypatch.setattr(SystemOutput.objects, "bulk_create", the_other_import_wins)
    error = refused(path, "--suite", "stresstest", "--system", "m1")
    assert "another import of the same system or items ran at the same time" in error
    assert stored() == [] and not System.objects.filter(name="m1").exists()
