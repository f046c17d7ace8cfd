from django.apps import AppConfig


class ModelzooConfig(AppConfig):
    name = "modelzoo"
    verbose_name = "Model zoo"
