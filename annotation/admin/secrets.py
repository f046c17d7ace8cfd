"""A secret made with an object (a webhook endpoint's signing secret, an API token) is shown once,
on the page that answers its creation, and never again: not on its change page, not in its list.
Whoever loses it makes a new one."""

from django.template.response import TemplateResponse


def secret_shown_once(request, model_admin, obj, *, secret: str, what: str, use: str) -> TemplateResponse:
    """The page after "Save" of a new `obj`: its secret, with where to go next."""
    opts = model_admin.opts
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"{opts.verbose_name.capitalize()} added: copy its {what} now",
        "opts": opts,
        "object": obj,
        "secret": secret,
        "what": what,
        "use": use,
        "changelist_url": f"admin:{opts.app_label}_{opts.model_name}_changelist",
    }
    # The admin's views are never_cache (no-store): a browser or proxy keeps no copy of the page.
    return TemplateResponse(request, "admin/secret_shown_once.html", context)
