"""The admin app, with every admin form (and inline) editing JSON model fields through the field
that refuses JSON nested too deeply with a message: Django's default lets the parser's RecursionError
become a 500, and every read-only JSON field shown as tables (annotation.json_tables) rather than
one line of JSON; and the site grouping its index and sidebar by what a researcher does
(config.admin_site). Listed in INSTALLED_APPS in place of django.contrib.admin; the defaults must
change before its ready() registers the ModelAdmins, which copy them."""

from django.contrib.admin.apps import AdminConfig as DjangoAdminConfig


class AdminConfig(DjangoAdminConfig):
    default_site = "config.admin_site.PlatformAdminSite"

    def ready(self):
        from django.contrib.admin import helpers, options
        from django.db import models

        from annotation.form_fields import JSONFormField
        from annotation.json_tables import display_for_field_with_tables

        options.FORMFIELD_FOR_DBFIELD_DEFAULTS[models.JSONField] = {"form_class": JSONFormField}
        # The change form's read-only fields (helpers.AdminReadonlyField) look the function up here.
        helpers.display_for_field = display_for_field_with_tables
        super().ready()
