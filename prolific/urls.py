from django.urls import path

from prolific.views import webhooks

app_name = "prolific"

urlpatterns = [
    path("prolific/webhooks/", webhooks.prolific_webhook, name="webhook"),
]
