"""The admin site, with its index and sidebar grouped by what a researcher does rather than by the
app that holds each model: Django lists apps, and one app ("Corpora and annotation") held clips
beside participants, webhook deliveries beside studies.

The groups name each model as "app_label.ObjectName". A model in no group (a new one) is listed
under its app's own name after the groups, so nothing registered goes missing from the sidebar;
tests/config/test_admin_groups.py fails until it is given a group.

Each group has a page of its own (admin/group/<slug>/, the admin's app index page with the
group's models), which its heading links to. An app's own index (admin/<app_label>/), which the
breadcrumbs of a model's pages link to, is Django's, unchanged.
"""

from django.contrib import admin
from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import path, reverse

# (slug, name, models in the order a study meets them)
GROUPS = (
    (
        "corpora-and-studies",
        "Corpora and studies",
        (
            "annotation.Corpus",
            "annotation.ImportJob",
            "annotation.Speaker",
            "annotation.Clip",
            "annotation.Word",
            "annotation.Study",
            "annotation.StudyItem",
            "annotation.ListeningFormItem",
            "evaluation.System",
            "evaluation.SystemOutput",
            "evaluation.CastSet",
            "evaluation.CastItem",
            "evaluation.CastRendition",
        ),
    ),
    (
        "review-and-reports",
        "Review and reports",
        (
            "annotation.Participant",
            "annotation.Annotation",
            "evaluation.AgreementReport",
            "evaluation.ListeningFormReport",
            "evaluation.SuiteReport",
        ),
    ),
    (
        "label-sets-and-benchmarks",
        "Label sets and benchmarks",
        ("evaluation.LabelSet", "evaluation.DatasetExport", "modelzoo.BenchmarkRun", "modelzoo.DetectionRun"),
    ),
    (
        "prolific",
        "Prolific",
        (
            "prolific.ProlificStudy",
            "prolific.ProlificParticipantGroup",
            "prolific.ProlificSubmission",
            "prolific.BonusBatch",
            "prolific.ProlificWebhookSubscription",
        ),
    ),
    (
        "operations-and-logs",
        "Operations and logs",
        (
            "prolific.ProlificStudyJob",
            "prolific.ProlificSendJob",
            "prolific.ProlificCall",
            "prolific.ProlificWebhookReceipt",
            "prolific.ProlificWebhookJob",
            "annotation.WebhookEndpoint",
            "annotation.WebhookDelivery",
        ),
    ),
    ("accounts", "Accounts and API tokens", ("auth.User", "auth.Group", "authtoken.TokenProxy")),
)


def grouped_app_list(app_list: list[dict], *, group_url) -> list[dict]:
    """The admin's app list (each app with its models, as AdminSite.get_app_list gives it) regrouped
    by GROUPS, in their order; groups the user sees nothing of are left out. Models in no group stay
    under their app, after the groups. group_url(slug) is a group's page."""
    models = {f"{app['app_label']}.{model['object_name']}": model for app in app_list for model in app["models"]}
    placed = set()
    grouped = []
    for slug, name, keys in GROUPS:
        shown = [models[key] for key in keys if key in models]
        placed.update(keys)
        if shown:
            grouped.append(
                {"name": name, "app_label": slug, "app_url": group_url(slug), "has_module_perms": True, "models": shown}
            )
    for app in app_list:
        left = [model for model in app["models"] if f"{app['app_label']}.{model['object_name']}" not in placed]
        if left:
            grouped.append({**app, "models": left})
    return grouped


class PlatformAdminSite(admin.AdminSite):
    def get_app_list(self, request, app_label=None):
        if app_label is not None:  # an app's own index page
            return super().get_app_list(request, app_label)
        return grouped_app_list(super().get_app_list(request), group_url=self._group_url)

    def get_urls(self):
        group = path("group/<slug:slug>/", self.admin_view(self.group_index), name="app_group")
        return [group, *super().get_urls()]

    def group_index(self, request, slug: str):
        """A group's page: its models with their add and change links, as an app's index shows them."""
        groups = [group for group in self.get_app_list(request) if group["app_label"] == slug]
        if not groups:
            raise Http404(f"No admin group {slug!r} (or none of its pages is open to you).")
        context = {
            **self.each_context(request),
            "title": groups[0]["name"],
            "subtitle": None,
            "app_list": groups,
            "app_label": slug,
        }
        request.current_app = self.name
        return TemplateResponse(request, "admin/app_index.html", context)

    def _group_url(self, slug: str) -> str:
        return reverse("admin:app_group", kwargs={"slug": slug}, current_app=self.name)
