"""The app's URLs plus the empty view of the load bench's framework floor."""

from django.http import HttpResponse
from django.urls import include, path


def empty(request):
    return HttpResponse(status=204)


urlpatterns = [path("bench-floor/", empty), path("", include("config.urls"))]
