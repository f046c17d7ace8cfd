from django.urls import path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("audio/<str:token>", views.audio, name="audio"),
]
