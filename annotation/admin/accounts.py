"""The accounts' pages (Django's users and groups) and the API tokens' (Django REST framework's),
registered again on the platform's base admin (annotation.admin.base): their lists accept only the
filters they declare, like every other list. A token's key is shown once, on the page after "Save"
of a new token (annotation.admin.secrets); DRF's own page lists every key to whoever may view tokens.

Imported by annotation.admin, after django.contrib.auth and rest_framework.authtoken (earlier in
INSTALLED_APPS) have registered theirs."""

from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth.models import Group, User
from rest_framework.authtoken import admin as token_admin
from rest_framework.authtoken.models import TokenProxy

from annotation.admin.base import PlatformModelAdmin
from annotation.admin.secrets import secret_shown_once

# DRF names a token by its key, and the admin prints an object's name in the change page's title,
# the breadcrumbs, the delete page and the action log: the admin's proxy is named by its user.
TokenProxy.__str__ = lambda token: f"API token of {token.user}"

for model in (User, Group, TokenProxy):
    if admin.site.is_registered(model):
        admin.site.unregister(model)


@admin.register(User)
class UserAdmin(PlatformModelAdmin, auth_admin.UserAdmin):
    pass


@admin.register(Group)
class GroupAdmin(PlatformModelAdmin, auth_admin.GroupAdmin):
    pass


@admin.register(TokenProxy)
class TokenAdmin(PlatformModelAdmin, token_admin.TokenAdmin):
    list_display = ("user", "created")

    def response_add(self, request, obj, post_url_continue=None):
        return secret_shown_once(
            request, self, obj, secret=obj.key, what="key", use="Scripts send it as Authorization: Token <key>."
        )
