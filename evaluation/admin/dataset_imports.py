"""The admin's upload of a public emphasis dataset (Label sets → Import a public dataset): a .zip
imported as the API's POST dataset-imports/ imports it (evaluation.services.dataset_uploads),
while the page waits. A refusal lists each bad record and nothing is written; with "skip invalid
records" ticked, the result lists each record left out with its reason."""

from django import forms
from django.conf import settings
from django.template.response import TemplateResponse

from annotation.ingest.errors import SHOWN_PROBLEMS, ImportRefused, SourceRefused
from annotation.ingest.source import relative_path_problem
from annotation.services.import_slots import ImportsBusy, import_slot_release, import_slot_take
from annotation.shared.access import require_perm
from annotation.uploads import uploaded_archive
from evaluation.models import LabelSet
from evaluation.services.dataset_uploads import (
    CROWD_FORMAT,
    STUDY_PERMISSION,
    DatasetUpload,
    DatasetUploadResult,
    dataset_upload_import,
    problem_rows,
)
from evaluation.services.label_set_imports import SPLIT_MODES
from evaluation.services.label_sets import LabelSetRefused

FORMAT_CHOICES = [
    ("emphassess", "EmphAssess (gold_df.json and its audio)"),
    ("tinystress", "TinyStress-15K (the hub's Parquet files or a save_to_disk folder)"),
    ("stresstest", "StressTest (the hub's Parquet files or a save_to_disk folder)"),
    (CROWD_FORMAT, "Morrison et al. (annotations.json and the LibriTTS audio): a closed study"),
]


class DatasetImportForm(forms.Form):
    archive = forms.FileField(help_text="A .zip holding the dataset's files, and its audio where they do not embed it.")
    format = forms.ChoiceField(choices=FORMAT_CHOICES)
    name = forms.CharField(max_length=200, help_text="The label set's name (Morrison: the study's).")
    skip_invalid = forms.BooleanField(
        required=False,
        label="Skip invalid records",
        help_text="Import the records that can be and list each one left out with its reason. Unticked, one bad "
        "record refuses the whole import and nothing is written.",
    )
    data = forms.CharField(
        required=False,
        help_text="The dataset file or folder inside the archive (default: gold_df.json, "
        "annotations.json, or the whole archive).",
    )
    audio = forms.CharField(required=False, help_text="The audio folder inside the archive (default: its root).")
    corpus = forms.CharField(max_length=200, required=False, help_text="Default: the dataset's name (or the study's).")
    splits = forms.ChoiceField(
        choices=[(mode, mode) for mode in SPLIT_MODES],
        initial="given",
        help_text='"given": the layout\'s split files; "assign": drawn per language, seeded; or one split for all.',
    )
    split_seed = forms.IntegerField(min_value=0, initial=0)
    label_source = forms.ChoiceField(choices=[("", "the dataset's own"), *LabelSet.LabelSource.choices], required=False)
    draft = forms.BooleanField(required=False, help_text="Leave the label set a draft (finalize it later).")
    label_set = forms.CharField(
        max_length=200, required=False, help_text="Morrison: also build and finalize a label set of this name."
    )
    keep_all_annotators = forms.BooleanField(required=False, help_text="Morrison: do not apply the emphases filters.")

    def clean_archive(self):
        archive = self.cleaned_data["archive"]
        if not archive.name.lower().endswith(".zip"):
            raise forms.ValidationError("must be a .zip")
        if archive.size > settings.IMPORT_MAX_ARCHIVE_BYTES:
            raise forms.ValidationError(f"is {archive.size} bytes; the limit is {settings.IMPORT_MAX_ARCHIVE_BYTES}")
        return archive

    def clean(self):
        values = super().clean()
        for name in ("data", "audio"):
            problem = relative_path_problem(values.get(name) or "") if values.get(name) else None
            if problem:
                self.add_error(name, f"{values[name]!r} {problem}")
        return values

    def upload(self) -> DatasetUpload:
        values = self.cleaned_data
        return DatasetUpload(
            format=values["format"],
            name=values["name"],
            archive_name=values["archive"].name,
            data=values["data"],
            audio=values["audio"],
            corpus=values["corpus"],
            splits=values["splits"],
            split_seed=values["split_seed"] or 0,
            label_source=values["label_source"] or None,
            draft=values["draft"],
            label_set=values["label_set"],
            keep_all_annotators=values["keep_all_annotators"],
            skip_invalid=values["skip_invalid"],
        )


def dataset_import_view(model_admin, request):
    require_perm(request, "evaluation.add_labelset")
    form = DatasetImportForm(request.POST or None, request.FILES or None)
    problems, result = [], None
    if request.method == "POST" and form.is_valid():
        result, problems = _imported(request, form)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Import a public dataset",
        "opts": model_admin.model._meta,
        "form": form,
        "problems": problems[:SHOWN_PROBLEMS],
        "more_problems": max(0, len(problems) - SHOWN_PROBLEMS),
        "result": result,
    }
    return TemplateResponse(request, "admin/evaluation/labelset/import.html", context)


def _imported(request, form) -> tuple[DatasetUploadResult | None, list[dict]]:
    """(the result, []) or (None, the bad records), the form saying why it was refused."""
    upload = form.upload()
    if upload.format == CROWD_FORMAT and not request.user.has_perm(STUDY_PERMISSION):
        form.add_error("format", "Morrison's annotations become a study: you need the permission to add studies.")
        return None, []
    try:
        slot = import_slot_take(user=request.user, what="admin: import a public dataset")
    except ImportsBusy as busy:
        form.add_error(None, f"Not imported: {busy}.")
        return None, []
    try:
        with uploaded_archive(form.cleaned_data["archive"]) as root:
            return dataset_upload_import(upload=upload, root=root, user=request.user), []
    except ImportRefused as refused:
        form.add_error(None, f"{len(refused.problems)} bad record(s) in {refused.manifest_name}; nothing was imported.")
        return None, problem_rows(refused.problems)
    except (SourceRefused, LabelSetRefused, FileNotFoundError) as error:
        form.add_error(None, str(error))
        return None, []
    finally:
        import_slot_release(slot=slot)
