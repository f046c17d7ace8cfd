"""Model-based labels beside the majority's: a label set built with an annotator model carries each
word's posterior and each annotator's reliability with its SE, its exports carry them as extra
columns and its data card says which model and when it was fitted; without one, nothing changes."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.models import LabelSet
from evaluation.selectors.label_sets import label_set_rows
from evaluation.services.label_sets import label_set_create, label_set_default_parameters
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import exported, final_label_set, zip_entries
from tests.evaluation.test_label_set_admin import make, staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return golden_study()


def test_rows_carry_the_posteriors_and_the_annotators_reliability(study, django_capture_on_commit_callbacks):
    label_set = final_label_set(
        study, django_capture_on_commit_callbacks, annotator_model="dawid-skene", model_resamples=4
    )
    rows = list(label_set_rows(label_set_id=label_set.pk))
    model = label_set.annotator_model
    reliabilities = model["studies"]["golden"]["annotators"]
    assert model["model"] == "dawid-skene" and "crowd-kit" in model["description"]
    assert model["se_method"] == "bootstrap over clips, 4 resamples" and model["fitted_at"]
    for row in rows:
        assert all(0 <= word["posterior"] <= 1 for word in row["words"])
        assert len(row["annotator_reliability"]) == len(row["annotators"])
        for annotator, (reliability, se) in zip(row["annotators"], row["annotator_reliability"], strict=True):
            assert reliabilities[annotator]["reliability"] == pytest.approx(reliability, abs=1e-6)
            assert se is None or se >= 0
    # The majority labels are those of the same set without the model.
    plain = final_label_set(study, django_capture_on_commit_callbacks, name="plain")
    assert [[w["binary"] for w in r["words"]] for r in label_set_rows(label_set_id=plain.pk)] == [
        [w["binary"] for w in r["words"]] for r in rows
    ]
    assert label_set.parameters["annotator_model"] == "dawid-skene"
    # Issue 31: the model's standing against the majority on the study's own annotations, and
    # the majority's labels recommended unless the model's predict held-out listeners better.
    standing = model["studies"]["golden"]["standing"]
    assert standing["verdict"] in ("better", "no better", "worse") and standing["held_out"] > 0
    low, high = standing["interval"]
    assert low <= standing["difference"] <= high
    assert standing["difference"] == pytest.approx(standing["model_agreement"] - standing["majority_agreement"])
    recommended = model["studies"]["golden"]["recommended_labels"]
    assert recommended == ("model" if standing["verdict"] == "better" else "majority")


def test_without_a_model_the_set_is_as_before(study, django_capture_on_commit_callbacks):
    label_set = final_label_set(study, django_capture_on_commit_callbacks)
    rows = list(label_set_rows(label_set_id=label_set.pk))
    assert label_set.annotator_model == {}
    assert "annotator_model" not in label_set.parameters and "model_resamples" not in label_set.parameters
    assert all("annotator_reliability" not in row for row in rows)
    assert all("posterior" not in word for row in rows for word in row["words"])


def test_exports_carry_the_model_columns_and_the_card_names_the_model(study, django_capture_on_commit_callbacks):
    label_set = final_label_set(study, django_capture_on_commit_callbacks, annotator_model="ordinal", model_resamples=2)
    files = zip_entries(exported(django_capture_on_commit_callbacks, format="csv", label_set=label_set))
    words = list(csv.DictReader(io.StringIO(files["words.csv"].decode())))
    clips = list(csv.DictReader(io.StringIO(files["clips.csv"].decode())))
    assert 0 <= float(words[0]["posterior"]) <= 1
    assert set(json.loads(words[0]["reliability"])) == set(json.loads(words[0]["levels"]))
    assert len(json.loads(clips[0]["annotator_reliability_se"])) == int(clips[0]["annotators"])
    card = files["README.md"].decode()
    assert "ordinal Dawid-Skene" in card and label_set.annotator_model["fitted_at"] in card
    assert "`posterior`" in card and "bootstrap over clips, 2 resamples" in card
    standing = label_set.annotator_model["studies"]["golden"]["standing"]
    assert "model labels against the majority" in card
    assert f"agrees with the model's label {100 * standing['model_agreement']:.1f} %" in card
    assert "labels are recommended" in card or "labels stay the recommended ones" in card

    jsonl = zip_entries(exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set))
    word = json.loads(jsonl["words.jsonl"].decode().splitlines()[0])
    assert {"posterior", "reliability", "reliability_se"} <= set(word)
    assert "annotator model" in jsonl["README.md"].decode()


def test_a_set_without_the_model_has_no_model_columns_nor_card_lines(study, django_capture_on_commit_callbacks):
    label_set = final_label_set(study, django_capture_on_commit_callbacks)
    files = zip_entries(exported(django_capture_on_commit_callbacks, format="csv", label_set=label_set))
    assert "posterior" not in files["words.csv"].decode().splitlines()[0]
    assert "annotator model" not in files["README.md"].decode()


def test_an_unknown_model_is_refused(study):
    with pytest.raises(ValueError, match="unknown annotator model 'glad'"):
        label_set_default_parameters(studies=[study], annotator_model="glad")


def test_the_admin_form_the_api_and_the_command_ask_for_it(client, study, django_capture_on_commit_callbacks):
    staff(client, "add_labelset", "view_labelset")
    made = make(client, study, django_capture_on_commit_callbacks, annotator_model="ordinal", model_resamples=2)
    assert made.status == LabelSet.Status.SUCCEEDED and made.annotator_model["model"] == "ordinal"
    page = client.get(reverse("admin:evaluation_labelset_change", args=[made.pk])).content.decode()
    assert "ordinal Dawid-Skene" in page
    assert "Model labels against the majority" in page and "a held-out listener&#x27;s mark agrees" in page

    api = token_client(staff_with("evaluation.view_labelset", "evaluation.add_labelset"))
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/v1/label-sets/",
            {
                "name": "api",
                "studies": [study.pk],
                "parameters": {"annotator_model": "dawid-skene", "model_resamples": 2},
            },
            format="json",
        )
    assert response.status_code == 202, response.content
    assert LabelSet.objects.get(name="api").annotator_model["model"] == "dawid-skene"
    refused = api.post(
        "/api/v1/label-sets/",
        {"name": "x", "studies": [study.pk], "parameters": {"annotator_model": "glad"}},
        format="json",
    )
    assert refused.status_code == 400 and "annotator_model" in refused.content.decode()

    out = io.StringIO()
    call_command(
        "labelset_create",
        "cli",
        "--study",
        study.slug,
        "--annotator-model",
        "dawid-skene",
        "--model-resamples",
        "2",
        stdout=out,
    )
    assert "annotator model: Dawid-Skene on the binary collapse" in out.getvalue()


def test_a_model_that_cannot_be_fitted_fails_the_build_and_says_why(django_capture_on_commit_callbacks):
    from tests.evaluation.builders import annotated_study

    study = annotated_study(
        annotations=[("clip-00", f"p{i}", [0, 0, 0], False, 10.0) for i in range(3)],
        clips={"clip-00": (3, "en", "en-US", "calm")},
        target_annotations=3,
    )
    parameters = label_set_default_parameters(studies=[study], annotator_model="dawid-skene", resamples=0)
    with django_capture_on_commit_callbacks(execute=True):
        label_set = label_set_create(name="flat", studies=[study], parameters=parameters)
    label_set.refresh_from_db()
    assert label_set.status == LabelSet.Status.FAILED
    assert "cannot be fitted" in label_set.error and "every word has the same mark" in label_set.error


def test_the_parquet_and_audiofolder_exports_carry_the_model_lists(corpus_folder, django_capture_on_commit_callbacks):
    import pyarrow.parquet as pq

    from tests.evaluation.export_builders import audio_study

    label_set = final_label_set(
        audio_study(corpus_folder),
        django_capture_on_commit_callbacks,
        name="voices",
        annotator_model="dawid-skene",
        model_resamples=2,
    )
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    files = zip_entries(exported(django_capture_on_commit_callbacks, format="parquet", label_set=label_set))
    table = pq.read_table(io.BytesIO(files["data/train.parquet"])).to_pylist()
    assert {"posterior", "annotator_reliability", "annotator_reliability_se"} <= set(table[0])
    for record in table:
        row = rows[record["clip_id"]]
        assert record["posterior"] == [word["posterior"] for word in row["words"]]
        assert record["annotator_reliability"] == [pair[0] for pair in row["annotator_reliability"]]
    folder = zip_entries(exported(django_capture_on_commit_callbacks, format="audiofolder", label_set=label_set))
    metadata = json.loads(folder["train/metadata.jsonl"].decode().splitlines()[0])
    assert metadata["posterior"] == [word["posterior"] for word in rows[metadata["clip_id"]]["words"]]
    assert "annotator model" in folder["README.md"].decode()
