"""Every staff page of a researcher's journey fits a 1366 x 768 screen: no page-level horizontal
scrolling (a wide table scrolls inside its own box, long text wraps), measured in headless Chromium
as document.documentElement.scrollWidth against clientWidth; and no chart's text runs past the
chart's edge.

The pages are those a study goes through: the admin index, the study's page, its top-ups, the review
page, the agreement report, the label set and its export, the benchmark run pages (one run, a
cross-lingual group with its heat maps, a cross-dataset run, the comparison), and the change list of
every model the admin registers, and the page of each group of them. A screenshot of each is saved to STAFF_SCREENSHOTS (a folder) when
that variable is set, to look at.
"""

import os
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.urls import reverse

from config.admin_site import GROUPS
from evaluation.models import DatasetExport
from evaluation.services.dataset_exports import dataset_export_request
from modelzoo.models import BenchmarkRun
from modelzoo.plans import Plan
from modelzoo.services.benchmark_runs import benchmark_runs_launch
from tests.audio_files import CorpusFolder
from tests.evaluation.builders import golden_study
from tests.modelzoo.builders import final_label_set, tiny_label_set

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
pytest.importorskip("parselmouth")  # the acoustic baseline's features, for the benchmark pages
PASSWORD = "a long secret password"
SCREEN = {"width": 1366, "height": 768}

OVERFLOW = """() => {
  const root = document.documentElement;
  const wide = [...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > root.clientWidth + 1)
    .filter(el => !el.parentElement || el.parentElement.getBoundingClientRect().right <= root.clientWidth + 1)
    .slice(0, 3)
    .map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string'
      ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' (' + Math.round(el.getBoundingClientRect().right) + ' px)');
  return {scroll: root.scrollWidth, client: root.clientWidth, wide};
}"""

# Text of a chart drawn beyond its own edges (cut off: "colour from 0 (ligh"); rotated labels are
# measured before their rotation, so they are left out.
CUT_TEXT = """() => [...document.querySelectorAll('#content svg[viewBox]')].flatMap(svg => {
  const width = svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text:not([transform])')]
    .filter(text => { const box = text.getBBox(); return box.x < -0.5 || box.x + box.width > width + 0.5; })
    .map(text => (svg.getAttribute('aria-label') || 'a chart') + ': ' + JSON.stringify(text.textContent));
})"""


@pytest.fixture
def researcher_page(chromium, live_server, settings):
    settings.DEBUG = True  # static files (the admin's CSS, htmx) from the app folders
    User.objects.create_superuser("researcher", "researcher@example.com", PASSWORD)
    context = chromium.new_context(viewport=SCREEN)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.get_by_label("Username").fill("researcher")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector("#user-tools")
    yield page
    context.close()


def journey_objects(tmp_path) -> dict:
    """A study with annotations (two participants' work enough to flag), its final label set and
    an export of it, and benchmark runs on two small sets: a cross-lingual group and a cross-dataset run."""
    study = golden_study()
    study_set = final_label_set([study], name="golden labels")
    export = dataset_export_request(format=DatasetExport.Format.CSV, label_set=study_set)
    tiny = tiny_label_set(CorpusFolder(tmp_path / "tiny"), name="tiny")
    other = tiny_label_set(CorpusFolder(tmp_path / "other"), name="other", languages=("en",))
    common = {"detector": "acoustic", "label_mode": "both", "resamples": 50}
    group = benchmark_runs_launch(label_set=tiny, plan=Plan("cross-lingual", with_diagonal=True), **common)
    [crossed] = benchmark_runs_launch(
        label_set=tiny, test_label_set=other, plan=Plan("cross-dataset", language="en", test_language="en"), **common
    )
    runs = [*group, crossed]
    assert all(BenchmarkRun.objects.get(pk=run.pk).status == BenchmarkRun.Status.SUCCEEDED for run in runs)
    return {"study": study, "label_set": study_set, "export": export, "group": group, "crossed": crossed}


def journey_pages(objects: dict) -> list[tuple[str, str]]:
    """(name, path) of each staff page of the journey, in the order a researcher meets them."""
    study, label_set, group = objects["study"], objects["label_set"], objects["group"]
    pages = [
        ("admin index", reverse("admin:index")),
        ("corpus import", reverse("admin:annotation_importjob_add")),
        ("corpus page", reverse("admin:annotation_corpus_change", args=[study.corpus_id])),
        ("new study", reverse("admin:annotation_study_add")),
        ("study page", reverse("admin:annotation_study_change", args=[study.pk])),
        ("top-ups", reverse("admin:annotation_study_topup", args=[study.pk])),
        ("review page", reverse("admin:annotation_participant_review", args=[study.pk])),
        ("study design", reverse("admin:evaluation_agreementreport_design", args=[study.pk])),
        (
            "study's participants",
            reverse("admin:annotation_participant_changelist") + f"?study__id__exact={study.pk}",
        ),
        ("agreement report", reverse("admin:evaluation_agreementreport_study", args=[study.pk])),
        ("new label set", reverse("admin:evaluation_labelset_add")),
        ("label set page", reverse("admin:evaluation_labelset_change", args=[label_set.pk])),
        ("export page", reverse("admin:evaluation_datasetexport_change", args=[objects["export"].pk])),
        ("benchmark launch", reverse("admin:modelzoo_benchmarkrun_add") + f"?label_set={label_set.pk}"),
        ("benchmark run", reverse("admin:modelzoo_benchmarkrun_change", args=[group[0].pk])),
        ("cross-dataset run", reverse("admin:modelzoo_benchmarkrun_change", args=[objects["crossed"].pk])),
        ("benchmark group", reverse("admin:modelzoo_benchmarkrun_group", args=[group[0].group])),
        (
            "benchmark comparison",
            reverse("admin:modelzoo_benchmarkrun_compare") + "?ids=" + ",".join(str(run.pk) for run in group),
        ),
    ]
    for slug, name, _ in GROUPS:
        pages.append((f"group {name}", reverse("admin:app_group", kwargs={"slug": slug})))
    for model in admin.site._registry:
        opts = model._meta
        pages.append(
            (
                f"{opts.app_label}.{opts.model_name} list",
                reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"),
            )
        )
    return pages


def test_every_staff_page_of_the_journey_fits_1366_pixels(researcher_page, live_server, tmp_path):
    objects = journey_objects(tmp_path)
    page = researcher_page
    # the agreement report as a researcher computes it (tasks run in-process here)
    page.goto(live_server.url + reverse("admin:evaluation_agreementreport_study", args=[objects["study"].pk]))
    page.get_by_role("button", name="Compute the report").click()
    page.wait_for_selector("text=Agreement")
    shots = Path(os.environ["STAFF_SCREENSHOTS"]) if os.environ.get("STAFF_SCREENSHOTS") else None

    overflowing, cut = [], []
    for name, path in journey_pages(objects):
        response = page.goto(live_server.url + path)
        assert response.status == 200, f"{name} ({path}): {response.status}"
        measured = page.evaluate(OVERFLOW)
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / f"{name.replace(' ', '-').replace('/', '-')}.png"), full_page=True)
        cut += [f"{name}: {text}" for text in page.evaluate(CUT_TEXT)]
        if measured["scroll"] > measured["client"]:
            overflowing.append(f"{name} ({path}): {measured['scroll']} px wide; {', '.join(measured['wide'])}")

    assert not overflowing, "pages wider than the 1366 px screen:\n" + "\n".join(overflowing)
    assert not cut, "chart text cut at the chart's edge:\n" + "\n".join(cut)
