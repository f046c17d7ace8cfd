"""Who may call an endpoint: Django's model permissions, reads included.

DRF's DjangoModelPermissions lets every signed-in user read; here a read needs view_<model>, a
POST add_<model>, a DELETE delete_<model>, and an action the permissions it declares. Anonymous
callers (a participant's study cookie is no sign-in) get 401, signed-in users without the
permission 403, and the permission is checked before any lookup, so that a 404 tells nothing to
someone who may not read the resource.
"""

from rest_framework.permissions import DjangoModelPermissions

VIEW = "%(app_label)s.view_%(model_name)s"


class ModelPermissions(DjangoModelPermissions):
    perms_map = {**DjangoModelPermissions.perms_map, "GET": [VIEW], "HEAD": [VIEW], "OPTIONS": [VIEW]}

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False  # DRF answers 401, with the token authenticator's WWW-Authenticate
        return user.has_perms(self.required_permissions(request, view))

    def required_permissions(self, request, view) -> list[str]:
        declared = getattr(view, "required_perms", None)
        if declared is not None:
            return list(declared)
        # The class's queryset, not get_queryset(): a nested route's get_queryset looks up its
        # parent, which would answer 404 before the permission could answer 403.
        return self.get_required_permissions(request.method, view.queryset.model)
