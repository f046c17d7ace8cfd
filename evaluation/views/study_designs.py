"""The study designer page, served inside the admin from a study's page (evaluation.admin wires it).

Viewing needs evaluation.view_agreementreport: like the report, it reads the study's annotations.
A design is computed on each submitted request (a few seconds); nothing is stored. The design
check (evaluation.services.design_checks) is the page's one write: a POST, which also needs
annotation.change_study, stores on the study whether model allocation and the ordinal predictor
beat the fixed design, which the study's admin and API then hold those choices to.
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from annotation.models import Study
from annotation.models.study import CHECKED_DESIGNS
from annotation.shared.access import get_study_for_staff, require_perm
from evaluation.design_form import StudyDesignForm
from evaluation.services.design_checks import study_design_check_from_pilot
from evaluation.services.study_designs import DesignRefused, study_design_compute


@require_http_methods(["GET", "HEAD", "POST"])
def study_design_page(request, study_id: int, *, admin_site):
    if request.method == "POST":
        return _design_check(request, study_id)
    study = get_study_for_staff(
        request, study_id, perm="evaluation.view_agreementreport", capability="answers_are_word_marks"
    )
    form = StudyDesignForm(request.GET if "source" in request.GET else None)
    design = None
    if form.is_bound and form.is_valid():
        try:
            design = study_design_compute(study=study, **form.design_arguments())
        except DesignRefused as refused:
            form.add_error(None, str(refused))
    context = {
        **admin_site.each_context(request),
        "title": f"Plan a study: {study.name}",
        "study": study,
        "form": form,
        "design": design,
        "checked_designs": _checked_designs(study),
        "opts": Study._meta,
    }
    return TemplateResponse(request, "evaluation/study_design.html", context)


def _design_check(request, study_id: int):
    """Check model allocation and the ordinal predictor from the study's pilot, at its settings,
    with the designer's own fit check of that pilot; then back to the page (post/redirect/get)."""
    require_perm(request, "annotation.change_study")  # it writes the study's check
    study = get_study_for_staff(
        request, study_id, perm="evaluation.view_agreementreport", capability="answers_are_word_marks"
    )
    try:
        study_design_check_from_pilot(study=study)
    except DesignRefused as refused:
        messages.error(request, f"Not checked: {refused}.")
    else:
        messages.success(request, "Checked model allocation and the ordinal predictor against the fixed design.")
    return redirect(request.path)


def _checked_designs(study: Study) -> list[dict]:
    """Each design the check is about, with its stored verdict (None before a check)."""
    check = study.design_check or {}
    return [
        {"design": design, "name": name, "field": field, "verdict": check.get(design)}
        for design, (field, name, _) in CHECKED_DESIGNS.items()
    ]
