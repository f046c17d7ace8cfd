from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_POST

from annotation.admin.base import PlatformModelAdmin
from annotation.audio_links import signed_audio_url
from annotation.forms import ImportUploadForm
from annotation.models import Clip, ClipWarning, Corpus, ImportJob, Speaker, Word
from annotation.services.corpus_import_jobs import corpus_import_create, folder_upload_zip
from annotation.services.import_slots import ImportsBusy, import_slot_release, import_slot_take
from annotation.services.studies import studies_create_per_language
from annotation.shared.access import get_import_job_for_staff
from annotation.views.job_progress import job_progress_response


@admin.register(Corpus)
class CorpusAdmin(PlatformModelAdmin):
    list_display = ["name", "clip_count", "created_at"]
    search_fields = ["name", "description"]
    actions = ["studies_per_language", "studies_per_variety"]
    change_form_template = "admin/annotation/corpus/change_form.html"
    PER = {"language": "One draft study per language", "variety": "One draft study per regional variety"}

    def get_urls(self):
        per = self.admin_site.admin_view(require_POST(self.studies_per_view))
        return [path("<int:pk>/studies-per/<str:by>/", per, name="annotation_corpus_studies_per"), *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The corpus page's buttons: a study of this corpus, or one draft study per language or variety."""
        context = {"can_add_study": self.has_add_study_permission(request), "studies_per": list(self.PER.items())}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    def studies_per_view(self, request, pk: int, by: str):
        """The list's "one draft study per ..." actions, for this one corpus, from its page."""
        if not self.has_add_study_permission(request):
            raise PermissionDenied
        if by not in self.PER:
            raise Http404(f"no studies per {by!r}: language or variety")
        corpus = get_object_or_404(Corpus, pk=pk)
        self._studies_per(request, Corpus.objects.filter(pk=corpus.pk), by)
        return redirect(reverse("admin:annotation_corpus_change", args=[corpus.pk]))

    @admin.action(description="Create one draft study per language", permissions=["add_study"])
    def studies_per_language(self, request, queryset):
        self._studies_per(request, queryset, "language")

    @admin.action(description="Create one draft study per regional variety", permissions=["add_study"])
    def studies_per_variety(self, request, queryset):
        self._studies_per(request, queryset, "variety")

    def has_add_study_permission(self, request):
        return request.user.has_perm("annotation.add_study")

    def _studies_per(self, request, queryset, by: str) -> None:
        for corpus in queryset:
            try:
                studies = studies_create_per_language(corpus=corpus, by=by)
            except (ValueError, IntegrityError) as error:
                self.message_user(request, f"{corpus.name}: no studies created ({error}).", messages.ERROR)
                continue
            names = ", ".join(study.name for study in studies) or f"none (no clip has a {by})"
            self.message_user(request, f"{corpus.name}: created {names}.", messages.SUCCESS)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(clip_count=Count("clips"))

    @admin.display(ordering="clip_count", description="clips")
    def clip_count(self, corpus):
        return corpus.clip_count


@admin.register(Speaker)
class SpeakerAdmin(PlatformModelAdmin):
    list_display = ["name", "corpus"]
    list_filter = ["corpus"]
    search_fields = ["name"]


class WarningFilter(admin.SimpleListFilter):
    title = "signal warnings"
    parameter_name = "warning"

    def lookups(self, request, model_admin):
        return [("any", "Any warning"), ("none", "No warning"), *ClipWarning.Code.choices]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "any":
            return queryset.filter(warnings__isnull=False).distinct()
        if value == "none":
            return queryset.filter(warnings__isnull=True)
        if value in ClipWarning.Code.values:
            return queryset.filter(warnings__code=value)
        return queryset


class WordInline(admin.TabularInline):
    model = Word
    fields = ["index", "text", "start", "end"]
    extra = 0


class ClipWarningInline(admin.TabularInline):
    model = ClipWarning
    fields = ["code", "detail"]
    readonly_fields = ["code", "detail"]
    extra = 0
    can_delete = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Clip)
class ClipAdmin(PlatformModelAdmin):
    list_display = ["external_id", "corpus", "language", "variety", "emotion", "speaker", "duration", "warning_codes"]
    list_filter = [
        "corpus",
        "language",
        "variety",
        "emotion",
        WarningFilter,
        ("speaker", admin.RelatedOnlyFieldListFilter),
    ]
    search_fields = ["external_id", "transcript", "speaker__name"]
    list_select_related = ["corpus", "speaker"]
    readonly_fields = [
        "player",
        "external_id",
        "corpus",
        "transcript",
        "source_path",
        "duration",
        "sample_rate",
        "channels",
        "checksum",
        "original_audio",
        "model_audio",
        "browser_audio",
        "created_at",
    ]
    fields = [
        "player",
        "external_id",
        "corpus",
        "speaker",
        "transcript",
        "language",
        "variety",
        "emotion",
        "metadata",
        "source_path",
        "duration",
        "sample_rate",
        "channels",
        "checksum",
        "original_audio",
        "model_audio",
        "browser_audio",
        "created_at",
    ]
    inlines = [WordInline, ClipWarningInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("warnings")

    @admin.display(description="warnings")
    def warning_codes(self, clip):
        return ", ".join(warning.code for warning in clip.warnings.all()) or "-"

    @admin.display(description="listen")
    def player(self, clip):
        if not clip.browser_audio:
            return "-"
        return format_html(
            '<audio controls preload="none" src="{}"></audio>', signed_audio_url(clip.browser_audio.name)
        )


@admin.register(Word)
class WordAdmin(PlatformModelAdmin):
    list_display = ["text", "index", "clip", "start", "end"]
    list_filter = ["clip__corpus", "clip__language"]
    search_fields = ["text", "clip__external_id"]
    list_select_related = ["clip"]
    raw_id_fields = ["clip"]


@admin.register(ImportJob)
class ImportJobAdmin(PlatformModelAdmin):
    list_display = ["archive_name", "corpus_name", "status", "progress_text", "created_by", "created_at"]
    list_filter = ["status"]
    readonly_fields = [
        "archive_name",
        "corpus_name",
        "corpus_link",
        "skip_invalid",
        "status",
        "phase",
        "done",
        "total",
        "summary_text",
        "problem_table",
        "created_by",
        "created_at",
        "finished_at",
    ]
    fields = readonly_fields
    change_form_template = "admin/annotation/importjob/change_form.html"

    def get_urls(self):
        return [
            path(
                "<int:pk>/progress/",
                self.admin_site.admin_view(self.progress_view),
                name="annotation_importjob_progress",
            ),
            *super().get_urls(),
        ]

    def has_change_permission(self, request, obj=None):
        return False

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ImportUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            job = self._queued(request, form)
            if job is not None:
                messages.info(request, "The archive is queued for import; this page shows its progress.")
                return redirect(reverse("admin:annotation_importjob_change", args=[job.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Import a corpus",
            "form": form,
            "opts": self.model._meta,
            "corpora": Corpus.objects.values_list("name", flat=True),
        }
        return TemplateResponse(request, "admin/annotation/importjob/upload.html", context)

    def _queued(self, request, form) -> ImportJob | None:
        """The queued import, or None with the form saying why not (as many imports under way as
        the user may have, a refused archive)."""
        data = form.cleaned_data
        try:
            slot = import_slot_take(user=request.user, what="admin: import a corpus")
        except ImportsBusy as busy:
            form.add_error(None, f"Not queued: {busy}.")
            return None
        try:
            with folder_upload_zip(files=data["folder"], paths=data["folder_paths"]) as zipped:
                return corpus_import_create(
                    upload=data["archive"] or zipped,
                    corpus_name=data["corpus_name"],
                    skip_invalid=data["skip_invalid"],
                    user=request.user,
                )
        except ValueError as error:
            form.add_error(None, str(error))
            return None
        finally:
            import_slot_release(slot=slot)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        job = self.get_object(request, object_id)
        context = {"corpus_url": _corpus_url(job)} if job is not None else {}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    def progress_view(self, request, pk: int):
        # As the admin's has_view_permission: change_importjob stands in for view_importjob.
        job = get_import_job_for_staff(request, pk, perm=("annotation.view_importjob", "annotation.change_importjob"))
        template = "admin/annotation/importjob/progress.html"
        return job_progress_response(request, job, template=template, context={"corpus_url": _corpus_url(job)})

    @admin.display(description="corpus")
    def corpus_link(self, job):
        url = _corpus_url(job)
        return format_html('<a href="{}">{}</a>', url, job.corpus_name) if url else "-"

    @admin.display(description="result")
    def summary_text(self, job):
        summary = job.summary
        if not summary:
            return "-"
        return (
            f"{summary['rows']} row(s) in {summary['manifest']}: {summary['created']} clip(s) imported, "
            f"{summary['unchanged']} already present, {summary['clips_with_warnings']} with signal warnings."
        )

    @admin.display(description="progress")
    def progress_text(self, job):
        return f"{job.phase} {job.done}/{job.total}" if job.total else job.phase or "-"

    @admin.display(description="refused rows")
    def problem_table(self, job):
        if not job.problems:
            return "-"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((p["line"], p["clip_id"], p["field"], p["reason"]) for p in job.problems),
        )
        return format_html(
            "<table><thead><tr><th>line</th><th>clip</th><th>field</th><th>reason</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )


def _corpus_url(job: ImportJob) -> str | None:
    """The corpus's clips in the admin, once the import has made (or added to) it."""
    if job.status != ImportJob.Status.SUCCEEDED:
        return None
    corpus = Corpus.objects.filter(name=job.summary.get("corpus", job.corpus_name)).first()
    if corpus is None:
        return None
    return f"{reverse('admin:annotation_clip_changelist')}?corpus__id__exact={corpus.pk}"
