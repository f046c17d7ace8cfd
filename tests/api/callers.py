"""Who calls the API in the tests: staff users with chosen permissions, by token or session,
and a participant's browser, which holds only its study cookie."""

from django.contrib.auth.models import Permission, User
from django.http import HttpResponse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.views.participant_access import remember_participant


def staff_with(*perms: str, active: bool = True) -> User:
    """A staff user holding exactly `perms` ("app_label.codename")."""
    user = User.objects.create_user(f"staff-{User.objects.count() + 1}", is_staff=True, is_active=active)
    for name in perms:
        app_label, codename = name.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return user


def token_client(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def session_client(user: User) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def participant_client(participant) -> APIClient:
    """A browser that entered `participant`'s study: it carries the signed study cookie, nothing else."""
    client = APIClient()
    client.cookies.update(remember_participant(HttpResponse(), participant).cookies)
    return client
