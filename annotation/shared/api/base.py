"""The viewset every API resource is built on."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter
from rest_framework.viewsets import GenericViewSet

from annotation.services.import_slots import ImportsBusy, import_slot_release, import_slot_take
from annotation.shared.api.errors import TooManyImports
from annotation.shared.api.idempotency import HEADER, answered_once


class ApiSchema(AutoSchema):
    """drf-spectacular's schema, with the Idempotency-Key header on every POST."""

    def get_override_parameters(self):
        parameters = super().get_override_parameters()
        if self.method != "POST":
            return parameters
        header = OpenApiParameter(
            HEADER,
            str,
            OpenApiParameter.HEADER,
            description="Any unique text (a UUID): a retry with the same key answers the first response "
            "instead of doing it again; the same key with another body is refused with 422.",
        )
        return [*parameters, header]


class ApiViewSet(GenericViewSet):
    schema = ApiSchema()
    # Ids in URLs are integers: the router writes <int:pk>, and the schema says so.
    lookup_value_converter = "int"
    # Permissions that replace the model permission of the request's method (see
    # permissions.ModelPermissions): set on a viewset whose rows are read under another model's
    # permission, or on an @action, e.g. @action(..., required_perms=("annotation.change_study",)).
    required_perms: tuple[str, ...] | None = None
    # The actions that take an upload to import: each holds an import slot while it runs
    # (annotation.services.import_slots), taken before the upload is read.
    import_actions: frozenset[str] = frozenset()
    _import_slot = None

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authenticated, permitted and throttled
        if self.action in self.import_actions:
            try:
                self._import_slot = import_slot_take(user=request.user, what=f"{request.method} {request.path}")
            except ImportsBusy as busy:
                raise TooManyImports(str(busy)) from None
        if request.method == "POST" and hasattr(self, "post"):
            # Every create and action honours an Idempotency-Key header (annotation/shared/api/idempotency.py).
            self.post = answered_once(self.post)

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            if self._import_slot is not None:  # whatever happened, even an error DRF does not handle
                import_slot_release(slot=self._import_slot)
