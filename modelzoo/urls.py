from django.urls import path

from modelzoo.views import downloads

app_name = "modelzoo"

urlpatterns = [
    path("benchmarks/download/<str:token>", downloads.file_download, name="file_download"),
]
