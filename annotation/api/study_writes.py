"""Creating and configuring studies, and moving them live, paused or closed, through the services the
admin uses (annotation.services.studies, study_settings, form_items_import):

- POST /studies/ (annotation.add_study): an emphasis study over a selection of a corpus's clips,
  with its settings, screening questions and attention checks; 201 with the study;
- POST /studies/form-upload/ (annotation.add_study, annotation.add_listeningformitem): multipart,
  items.jsonl (or a .zip of it with its audio), as import_listening_form_items; 201 with the study;
- PATCH /studies/{id}/ (annotation.change_study): settings; a list of screening questions or
  attention checks replaces the study's;
- POST /studies/{id}/live/, /pause/, /close/ (annotation.change_study): the admin's actions, with
  the same checks ("Set live" is refused with what the study lacks).

The rules are the study admin's: a create is checked by its StudyCreateForm (the selection names
clips and speakers the corpus has, and matches clips), screening questions and attention checks by
its inline forms (answers offered and accepted, expected levels that fit the clip's words). Every
write is atomic: a 4xx leaves nothing changed.
"""

import re
from functools import partial
from pathlib import Path

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings

from annotation.models import AttentionCheck, Clip, PrerequisiteQuestion, Study
from annotation.services.form_items_import import form_items_import
from annotation.services.studies import study_create, study_setting_warnings, study_status_set
from annotation.services.study_settings import study_configure
from annotation.shared.api.errors import REFUSED
from annotation.study_forms import (
    CREATE_SETTINGS,
    AttentionCheckForm,
    PrerequisiteQuestionForm,
    StudyCreateForm,
    word_levels_errors,
)
from annotation.uploads import uploaded_archive

# The settings a script may give at creation and change later: the study admin's change page.
SETTINGS = [
    "interface_language",
    "text_direction",
    "clips_per_task",
    "target_annotations",
    "places",
    "allow_repeat_tasks",
    "time_limit_minutes",
    "attention_checks_per_task",
    "mismatch_threshold",
    "min_marked_words",
    "max_marked_fraction",
    "required_coverage",
    "sound_check",
    "sound_check_tries",
    "headphone_check",
    "headphone_check_trials",
    "huggins_pass_mark",
    "antiphase_pass_mark",
    "headphone_check_tries",
    "headphone_check_screens_out",
    "instructions",
    "example_clip",
    "example_levels",
    "consent_text",
    "reward",
    "reward_currency",
    "estimated_minutes",
    "completion_code",
    "screen_out_code",
    "review_min_attention",
    "review_min_kappa",
    "review_min_time_ratio",
    # The adaptive design; model allocation and the ordinal predictor only where the study's design
    # check says they beat the fixed design (a 400 refusal otherwise, annotation.services.study_settings).
    "adaptive_mode",
    "adaptive_epsilon",
    "adaptive_min_annotators",
    "adaptive_max_per_clip",
    "adaptive_scalar_se",
    "adaptive_predictor",
]


class PrerequisiteSerializer(serializers.ModelSerializer):
    choices = serializers.ListField(child=serializers.CharField(), help_text="The answers offered, in order.")
    accepted = serializers.ListField(child=serializers.CharField(), help_text="The answers that qualify.")

    class Meta:
        model = PrerequisiteQuestion
        fields = ["id", "position", "text", "choices", "accepted"]
        read_only_fields = ["id", "position"]


class AttentionCheckSerializer(serializers.ModelSerializer):
    clip = serializers.PrimaryKeyRelatedField(queryset=Clip.objects.all(), help_text="The clip's API id.")
    expected = serializers.DictField(
        child=serializers.IntegerField(),
        help_text='The level each named word must take, by word index from 0, e.g. {"4": 2}; others may take any.',
    )

    class Meta:
        model = AttentionCheck
        fields = ["id", "clip", "kind", "rule", "expected"]
        read_only_fields = ["id"]


class ClipSelectionSerializer(serializers.Serializer):
    """Which clips of the corpus the study covers; criteria left out select everything."""

    languages = serializers.ListField(child=serializers.CharField(), required=False)
    varieties = serializers.ListField(child=serializers.CharField(), required=False)
    emotions = serializers.ListField(child=serializers.CharField(), required=False)
    speakers = serializers.ListField(child=serializers.CharField(), required=False)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    clip_ids = serializers.ListField(child=serializers.CharField(), required=False, help_text="Manifest clip ids.")


class StudySettingsSerializer(serializers.ModelSerializer):
    """PATCH: any of the settings; `prerequisites` or `attention_checks`, when given, replace the study's."""

    prerequisites = PrerequisiteSerializer(many=True, required=False, help_text="Screening questions, in order.")
    attention_checks = AttentionCheckSerializer(
        many=True, required=False, help_text="Emphasis studies: clips with expected answers, slipped into tasks."
    )

    class Meta:
        model = Study
        fields = [*SETTINGS, "prerequisites", "attention_checks"]


class StudyCreateSerializer(StudySettingsSerializer):
    """A new emphasis study: its corpus, the clips it covers, and any of the settings (the rest take
    their defaults; the screening questions default to MMEE's)."""

    selection = ClipSelectionSerializer(required=False, help_text="Default: every clip of the corpus.")

    class Meta:
        model = Study
        fields = ["name", "slug", "corpus", "language", "selection", *StudySettingsSerializer.Meta.fields]
        extra_kwargs = {
            "slug": {"required": False, "help_text": "Part of the participant link; default: from the name."},
            "language": {"help_text": "Default: the selected clips' language, when they share one."},
        }


class StudyDetailSerializer(serializers.ModelSerializer):
    """A study as its writes answer it: every setting, its questions and checks, and warnings."""

    prerequisites = PrerequisiteSerializer(many=True, read_only=True)
    attention_checks = AttentionCheckSerializer(many=True, read_only=True)
    clips = serializers.SerializerMethodField(help_text="Clips (emphasis) or items (listening form) in the study.")
    warnings = serializers.SerializerMethodField(help_text="Settings allowed but rarely meant.")

    class Meta:
        model = Study
        fields = ["id", "name", "slug", "kind", "status", "corpus", "language", "selection", "clips"]
        fields += [*SETTINGS, "prerequisites", "attention_checks", "warnings", "created_at"]
        read_only_fields = fields

    def get_clips(self, study) -> int:
        return study.items.count()

    def get_warnings(self, study) -> list[str]:
        return study_setting_warnings(study=study)


class FormUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="items.jsonl, or a .zip of it with the audio it names.")
    study_name = serializers.CharField(max_length=200)
    corpus_name = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="", help_text="Default: from the file's name."
    )
    language = serializers.CharField(max_length=35, required=False, allow_blank=True, default="")
    skip_invalid = serializers.BooleanField(default=False)
    with_ssd = serializers.BooleanField(default=False, help_text="Items may use the SSD fields (stress tests).")


STATUS_REFUSED = OpenApiResponse(description='Refused, with the reason in "status"; nothing changed.')


class StudyWritesMixin:
    """The writes of /studies/ (mixed into annotation.api.studies.StudyViewSet)."""

    @extend_schema(request=StudyCreateSerializer, responses={201: StudyDetailSerializer})
    def create(self, request):
        """A draft emphasis study over the selected clips (the admin's "Add study")."""
        given = StudyCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        with transaction.atomic():
            form = StudyCreateForm(data=_create_form_data(data))
            if not form.is_valid():
                raise ValidationError(_form_errors(form.errors))
            # The interface language comes first: the default screening questions are written in it.
            interface = {"interface_language": data["interface_language"]} if "interface_language" in data else {}
            created = study_create(
                name=form.cleaned_data["name"],
                corpus=form.cleaned_data["corpus"],
                selection=form.selection(),
                **form.settings(),
                **interface,
            )
            given = ("name", "slug", "corpus", "interface_language")
            rest = {name: value for name, value in request.data.items() if name not in given}
            study = _configured(created, {name: rest[name] for name in rest if name not in CREATE_SETTINGS})
        return Response(StudyDetailSerializer(study).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=StudySettingsSerializer, responses={200: StudyDetailSerializer})
    def partial_update(self, request, pk: int):
        """Change settings, screening questions or attention checks, as the study's admin page does."""
        study = self.get_object()
        with transaction.atomic():
            study = _configured(study, request.data)
        return Response(StudyDetailSerializer(study).data)

    @extend_schema(
        request={"multipart/form-data": FormUploadSerializer},
        responses={201: StudyDetailSerializer, 400: REFUSED},
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="form-upload",
        parser_classes=[MultiPartParser],
        required_perms=("annotation.add_study", "annotation.add_listeningformitem"),
    )
    def form_upload(self, request):
        """A draft listening-form study from items.jsonl, as import_listening_form_items makes it."""
        given = FormUploadSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        upload = data["file"]
        if upload.size > django_settings.IMPORT_MAX_ARCHIVE_BYTES:
            limit = django_settings.IMPORT_MAX_ARCHIVE_BYTES
            raise ValidationError({"file": [f"{upload.name} is {upload.size} bytes; the limit is {limit}"]})
        # The folder is named as the upload: the corpus's default name is taken from it.
        folder_name = Path(_safe_name(upload.name)).stem or "items"
        with uploaded_archive(upload, folder_name=folder_name) as folder, transaction.atomic():
            report = form_items_import(
                path=folder,
                study_name=data["study_name"],
                corpus_name=data["corpus_name"] or None,
                skip_invalid=data["skip_invalid"],
                with_ssd=data["with_ssd"],
                language=data["language"],
            )
        return Response(StudyDetailSerializer(report.study).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: StudyDetailSerializer, 400: STATUS_REFUSED})
    @action(detail=True, methods=["post"], required_perms=("annotation.change_study",))
    def live(self, request, pk: int):
        """Hand out work: refused, as the admin's "Set live", while the study lacks what participants need."""
        return self._moved(Study.Status.LIVE)

    @extend_schema(request=None, responses={200: StudyDetailSerializer, 400: STATUS_REFUSED})
    @action(detail=True, methods=["post"], required_perms=("annotation.change_study",))
    def pause(self, request, pk: int):
        """Stop handing out work; tasks already given can still be finished."""
        return self._moved(Study.Status.PAUSED)

    @extend_schema(request=None, responses={200: StudyDetailSerializer, 400: STATUS_REFUSED})
    @action(detail=True, methods=["post"], required_perms=("annotation.change_study",))
    def close(self, request, pk: int):
        """Close the study (it may go live again for a top-up)."""
        return self._moved(Study.Status.CLOSED)

    def _moved(self, to: str) -> Response:
        study = self.get_object()
        try:
            study = study_status_set(study=study, status=to)
        except ValueError as refusal:
            raise ValidationError({"status": [f"Not set {to}: {refusal}"]}) from None
        return Response(StudyDetailSerializer(study).data)


def _create_form_data(data: dict) -> dict:
    """The admin's create form, filled as a person would: what was given, else the model's defaults."""
    form_data = {"name": data["name"], "slug": data.get("slug", ""), "corpus": data["corpus"].pk}
    for name in CREATE_SETTINGS:
        value = data[name] if name in data else Study._meta.get_field(name).get_default()
        form_data[name] = "" if value is None else value
    selection = data.get("selection") or {}
    for name in ("languages", "varieties", "emotions"):
        form_data[name] = selection.get(name, [])
    for name in ("speakers", "tags", "clip_ids"):
        form_data[name] = "\n".join(selection.get(name, []))
    return form_data


def _configured(study: Study, given) -> Study:
    """Check `given` (request fields) against the model and the admin's forms, then write it."""
    serializer = StudySettingsSerializer(study, data=given, partial=True)
    serializer.is_valid(raise_exception=True)
    data = dict(serializer.validated_data)
    prerequisites = data.pop("prerequisites", None)
    checks = data.pop("attention_checks", None)
    _check_example(study, data)
    if checks is not None and study.capabilities.checks_are_items:
        raise ValidationError({"attention_checks": ["A listening form's attention checks are its items."]})
    try:
        return study_configure(
            study=study,
            settings=data,
            prerequisites=None if prerequisites is None else _checked(prerequisites, _prerequisite_form),
            attention_checks=None if checks is None else _checked(checks, partial(_check_form, study=study)),
        )
    except DjangoValidationError as error:
        raise ValidationError(error.message_dict if hasattr(error, "error_dict") else error.messages) from None


def _check_example(study: Study, data: dict) -> None:
    # The admin change form's rule: the worked example's levels must fit its clip's words.
    clip = data.get("example_clip", study.example_clip)
    levels = data.get("example_levels", study.example_levels)
    if not levels or ("example_clip" not in data and "example_levels" not in data):
        return
    if clip is None:
        raise ValidationError({"example_clip": ["Choose the clip the example levels belong to."]})
    errors = word_levels_errors(dict(enumerate(levels)), clip.words.count(), clip)
    if errors:
        raise ValidationError({"example_levels": errors})


def _prerequisite_form(position: int, question: dict) -> PrerequisiteQuestionForm:
    return PrerequisiteQuestionForm(data={"position": position, **question})


def _check_form(position: int, check: dict, *, study: Study) -> AttentionCheckForm:
    data = {
        "clip": check["clip"].pk,
        "kind": check.get("kind") or AttentionCheck.Kind.INSTRUCTED,
        "rule": check.get("rule") or AttentionCheck.Rule.AT_LEAST,
    }
    # The check's study, as the admin's inline gives it: the model's clean() wants the study's clips.
    return AttentionCheckForm(data={**data, "expected": check["expected"]}, instance=AttentionCheck(study=study))


def _checked(rows: list[dict], make_form) -> list[dict]:
    """Each row through its admin form; the errors name the row by its place in the list."""
    cleaned, errors = [], {}
    for position, row in enumerate(rows):
        form = make_form(position, row)
        if form.is_valid():
            kept = ("text", "choices", "accepted", "clip", "kind", "rule")
            fields = [name for name in form.cleaned_data if name in kept]
            cleaned.append({name: form.cleaned_data[name] for name in fields} | _expected(form))
        else:
            errors[str(position)] = _form_errors(form.errors)
    if errors:
        name = "prerequisites" if make_form is _prerequisite_form else "attention_checks"
        raise ValidationError({name: errors})
    return cleaned


def _expected(form) -> dict:
    return {"expected": form.cleaned_data["expected"]} if "expected" in form.cleaned_data else {}


def _form_errors(errors) -> dict:
    return {
        (api_settings.NON_FIELD_ERRORS_KEY if name == "__all__" else name): list(messages)
        for name, messages in errors.items()
    }


def _safe_name(name: str) -> str:
    # Only the last part, in safe characters: the name is the client's and becomes a path here.
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name or "").name).strip("._")
    return cleaned[:100] or "items.jsonl"
