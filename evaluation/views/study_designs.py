"""The study designer page, served inside the admin from a study's page (evaluation.admin wires it).

Viewing needs evaluation.view_agreementreport: like the report, it reads the study's annotations.
A design is computed on each submitted request (a few seconds); nothing is stored.
"""

from django.template.response import TemplateResponse
from django.views.decorators.http import require_safe

from annotation.models import Study
from annotation.shared.access import get_study_for_staff
from evaluation.design_form import StudyDesignForm
from evaluation.services.study_designs import DesignRefused, study_design_compute


@require_safe
def study_design_page(request, study_id: int, *, admin_site):
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
        "opts": Study._meta,
    }
    return TemplateResponse(request, "evaluation/study_design.html", context)
