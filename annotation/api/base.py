"""The viewset every API resource is built on."""

from rest_framework.viewsets import GenericViewSet


class ApiViewSet(GenericViewSet):
    # Ids in URLs are integers: the router writes <int:pk>, and the schema says so.
    lookup_value_converter = "int"
    # Permissions that replace the model permission of the request's method (see
    # permissions.ModelPermissions): set on a viewset whose rows are read under another model's
    # permission, or on an @action, e.g. @action(..., required_perms=("annotation.change_study",)).
    required_perms: tuple[str, ...] | None = None
