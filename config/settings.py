"""One settings module, driven by environment variables (see README, "Settings").

With nothing set it runs on the embedded default: SQLite (WAL) and media files
in DATA_DIR, and an embedded file-system Celery broker.
"""

import os
from pathlib import Path

from config import env

BASE_DIR = Path(__file__).resolve().parent.parent
ENV = os.environ

DATA_DIR = Path(ENV.get("DATA_DIR") or BASE_DIR / "data").resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = DATA_DIR / "media"

SECRET_KEY = env.secret_key(ENV, DATA_DIR)
DEBUG = env.debug(ENV)
ALLOWED_HOSTS = env.env_list(ENV, "ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.env_list(ENV, "CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "annotation",
    "evaluation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Error pages outside a study follow the browser's language; study pages
    # switch to the study's own interface language in their views.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.database(ENV, DATA_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

STORAGES = env.storages(ENV, MEDIA_ROOT)
STORAGE_BACKEND = ENV.get("STORAGE_BACKEND", "local")

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns on every request when it is missing
STATICFILES_DIRS = [BASE_DIR / "static"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
# Interface languages a study can choose for its participants. Translations
# are compiled into locale/ in the repository, so no gettext tools are needed.
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("pt", "Português"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("it", "Italiano"),
    ("zh-hans", "简体中文"),
    ("ar", "العربية"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Uploaded archives can be large; Django streams them to a temporary file.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# --- Corpus import limits -------------------------------------------------
IMPORT_MAX_ARCHIVE_BYTES = env.env_int(ENV, "IMPORT_MAX_ARCHIVE_BYTES", 4 * 1024**3, minimum=1)
IMPORT_MAX_FILE_BYTES = env.env_int(ENV, "IMPORT_MAX_FILE_BYTES", 200 * 1024**2, minimum=1)
IMPORT_MAX_FILES = env.env_int(ENV, "IMPORT_MAX_FILES", 200_000, minimum=1)
IMPORT_MAX_CLIP_SECONDS = env.env_int(ENV, "IMPORT_MAX_CLIP_SECONDS", 120, minimum=1)
IMPORT_WORKERS = env.env_int(ENV, "IMPORT_WORKERS", os.cpu_count() or 1, minimum=1)

# --- Audio links for browsers ----------------------------------------------
AUDIO_URL_TTL_SECONDS = env.env_int(ENV, "AUDIO_URL_TTL_SECONDS", 900, minimum=1)

# --- Celery ------------------------------------------------------------------
globals().update(env.celery(ENV, DATA_DIR))

REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.DjangoModelPermissions"],
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": ENV.get("LOG_LEVEL", "INFO")},
}

# --- Prolific API (participant review; README "Reviewing participants and Prolific") ---
# An empty token turns the client off: decisions are still recorded and exported.
PROLIFIC_API_TOKEN = ENV.get("PROLIFIC_API_TOKEN", "").strip()
PROLIFIC_API_URL = env.http_url(ENV, "PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
