"""One settings module, driven by environment variables (see README, "Settings").

With nothing set it runs on the embedded default: SQLite (WAL) and media files
in DATA_DIR, and an embedded file-system Celery broker.
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

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
    "config.admin_app.AdminConfig",  # django.contrib.admin, with JSON fields that refuse deep nesting
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and ReDoc as static files: the docs pages need no CDN
    "annotation",
    "prolific",
    "evaluation",
    "modelzoo",
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
    "annotation.middleware.DatabaseUnavailableMiddleware",
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
# On the embedded default whitenoise serves static files straight from the
# source folders, DEBUG or not, so `make run` needs no collectstatic. On a
# database server the web server collects them (gzipped) into STATIC_ROOT as
# it starts, when they are missing or older than their sources (config/static_files.py).
WHITENOISE_USE_FINDERS = env.is_embedded(ENV)

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

# Uploaded archives can be large; Django streams them to a temporary file, and the first handler
# refuses a request whose files pass IMPORT_MAX_ARCHIVE_BYTES as they arrive (annotation/uploads.py).
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_HANDLERS = [
    "annotation.uploads.LimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- Corpus import limits -------------------------------------------------
IMPORT_MAX_ARCHIVE_BYTES = env.env_int(ENV, "IMPORT_MAX_ARCHIVE_BYTES", 4 * 1024**3, minimum=1)
IMPORT_MAX_FILE_BYTES = env.env_int(ENV, "IMPORT_MAX_FILE_BYTES", 200 * 1024**2, minimum=1)
IMPORT_MAX_FILES = env.env_int(ENV, "IMPORT_MAX_FILES", 200_000, minimum=1)
IMPORT_MAX_CLIP_SECONDS = env.env_int(ENV, "IMPORT_MAX_CLIP_SECONDS", 120, minimum=1)
IMPORT_WORKERS = env.env_int(ENV, "IMPORT_WORKERS", os.cpu_count() or 1, minimum=1)
# Imports one user may have under way at once: uploads being received or imported, and corpus
# import jobs queued or running (annotation.services.import_slots); one more is answered 429.
IMPORT_MAX_CONCURRENT_PER_USER = env.env_int(ENV, "IMPORT_MAX_CONCURRENT_PER_USER", 2, minimum=1)

# --- Audio links for browsers ----------------------------------------------
AUDIO_URL_TTL_SECONDS = env.env_int(ENV, "AUDIO_URL_TTL_SECONDS", 900, minimum=1)

# --- Celery ------------------------------------------------------------------
globals().update(env.celery(ENV, DATA_DIR))
# Training goes to the GPU workers (`celery -A config worker -Q gpu`); everything else to the default queue.
CELERY_TASK_ROUTES = {"modelzoo.*": {"queue": "gpu"}}

# --- Model zoo (README "Model zoo") -------------------------------------------
# Pretrained backbones in Hugging Face layout (whisper-small, wav2vec2-xls-r-1b, ...); nothing is downloaded.
MODELZOO_CHECKPOINT_DIR = env.folder(ENV, "MODELZOO_CHECKPOINT_DIR", DATA_DIR / "checkpoints")

# --- REST API (README "REST API"; each app's api/ package, composed in config/urls.py) ---
API_THROTTLE_RATE = env.rate(ENV, "API_THROTTLE_RATE", "120/minute")
REST_FRAMEWORK = {
    # Tokens for scripts, the session for the browsable API. Token first: its WWW-Authenticate
    # header is what makes a request without credentials a 401 rather than a 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["annotation.shared.api.permissions.ModelPermissions"],
    "DEFAULT_PAGINATION_CLASS": "annotation.shared.api.pagination.PageNumberPagination",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": API_THROTTLE_RATE},
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotation.shared.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Emphasis platform API",
    "DESCRIPTION": "Corpora, studies, annotations, agreement reports, label sets and dataset exports. "
    "Send `Authorization: Token <key>`; every endpoint needs the Django permission it names.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # Bodies are described as JSON (uploads say multipart themselves): the forms DRF also parses are
    # for the browsable API, and a client generated from the schema must know which one to send.
    "PARSER_WHITELIST": ["rest_framework.parsers.JSONParser"],
    # Request bodies get their own components, so read-only fields do not show up as inputs.
    "COMPONENT_SPLIT_REQUEST": True,
    # Two models have a "status": name their choices, rather than let the schema invent names.
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "annotation.models.background_job.BackgroundJob.Status",
        "StudyStatusEnum": "annotation.models.study.Study.Status",
        "StudyKindEnum": "annotation.models.study.Study.Kind",
        "AttentionCheckKindEnum": "annotation.models.study.AttentionCheck.Kind",
        # A study's adaptive design is read (its `adaptive` object) and written (its settings): one name each.
        "AdaptiveModeEnum": "annotation.models.study.Study.Adaptive",
        "AdaptivePredictorEnum": "annotation.models.study.Study.Predictor",
        # The model zoo's setting kind and arousal choices appear in several fields: one name each.
        "BenchmarkSettingKindEnum": "modelzoo.models.benchmark_run.BenchmarkRun.Kind",
        "ArousalEnum": "modelzoo.models.benchmark_run.BenchmarkRun.Arousal",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The system's fonts rather than ReDoc's Montserrat and Roboto, which come from Google's servers
    # (templates/drf_spectacular/redoc.html leaves their links out).
    "REDOC_UI_SETTINGS": {
        "theme": {
            "typography": {"fontFamily": "system-ui, sans-serif", "headings": {"fontFamily": "system-ui, sans-serif"}}
        }
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": ENV.get("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO; the Prolific calls are recorded as ProlificCall instead.
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}

# --- Prolific API (participant review; README "Reviewing participants and Prolific") ---
# An empty token turns the client off: decisions are still recorded and exported.
PROLIFIC_API_TOKEN = ENV.get("PROLIFIC_API_TOKEN", "").strip()
PROLIFIC_API_URL = env.http_url(ENV, "PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
# Each call's timeout, and its retries (prolific/client/retries.py: 429 always, 5xx and lost
# answers only for calls safe to repeat), with Retry-After honoured up to the longest wait.
PROLIFIC_TIMEOUT_SECONDS = env.env_int(ENV, "PROLIFIC_TIMEOUT_SECONDS", 30, minimum=1)
PROLIFIC_RETRY_ATTEMPTS = env.env_int(ENV, "PROLIFIC_RETRY_ATTEMPTS", 4, minimum=1)
PROLIFIC_RETRY_MAX_WAIT_SECONDS = env.env_int(ENV, "PROLIFIC_RETRY_MAX_WAIT_SECONDS", 30, minimum=0)
PROLIFIC_RETRY_INITIAL_WAIT_SECONDS = 0.5
# How often a worker refreshes the studies running on Prolific and grows those set to grow.
PROLIFIC_FOLLOW_SECONDS = env.env_int(ENV, "PROLIFIC_FOLLOW_SECONDS", 300, minimum=10)
# The workspace new participant groups are made in (Prolific asks for one; the app's URL shows it).
PROLIFIC_WORKSPACE_ID = ENV.get("PROLIFIC_WORKSPACE_ID", "").strip()
# Prolific's service fee as a share of rewards and bonuses, for the cost preview: 33.3 % is the
# rate Prolific's pricing page gives for academic researchers (42.8 % for companies); set yours.
try:
    PROLIFIC_SERVICE_FEE = float(ENV.get("PROLIFIC_SERVICE_FEE", "0.333"))
except ValueError:
    raise ImproperlyConfigured("PROLIFIC_SERVICE_FEE must be a share such as 0.333 (33.3 %)") from None
# Prolific's screener ids (GET /api/v1/filters/ lists them; creating a study checks each is there).
PROLIFIC_FILTER_IDS = {
    "first_language": ENV.get("PROLIFIC_FILTER_FIRST_LANGUAGE", "first-language"),
    "fluent_languages": ENV.get("PROLIFIC_FILTER_FLUENT_LANGUAGES", "fluent-languages"),
    "approval_rate": ENV.get("PROLIFIC_FILTER_APPROVAL_RATE", "approval_rate"),
    "approvals": ENV.get("PROLIFIC_FILTER_APPROVALS", "approval_numbers"),
    "education": ENV.get("PROLIFIC_FILTER_EDUCATION", "highest-education-level-completed"),
    "hearing_difficulties": ENV.get("PROLIFIC_FILTER_HEARING", "hearing-difficulties"),
    "literacy_difficulties": ENV.get("PROLIFIC_FILTER_LITERACY", "literacy-difficulties"),
    "exclude_group": ENV.get("PROLIFIC_FILTER_EXCLUDE_GROUP", "participant_group_blocklist"),
}
# Submissions and bonuses (prolific.services.submissions, prolific.services.bonuses; docs/operations.md
# "Prolific webhooks"). Poll the submissions of studies with open tasks every this many seconds in
# every Celery worker (0: never; webhooks alone).
PROLIFIC_POLL_SECONDS = env.env_int(ENV, "PROLIFIC_POLL_SECONDS", 120)
# The workspace's webhook secret (Prolific's `hooks/secrets/`); subscribing from the admin stores one too.
PROLIFIC_WEBHOOK_SECRET = ENV.get("PROLIFIC_WEBHOOK_SECRET", "").strip()
# A webhook signed further than this from our clock is refused (a replay, or a clock far off).
PROLIFIC_WEBHOOK_TOLERANCE_SECONDS = env.env_int(ENV, "PROLIFIC_WEBHOOK_TOLERANCE_SECONDS", 300, minimum=1)
# Prolific calls only https:// addresses; the tests' fake may call http://127.0.0.1.
PROLIFIC_WEBHOOK_ALLOW_HTTP = env.env_bool(ENV, "PROLIFIC_WEBHOOK_ALLOW_HTTP", False)
# The waits before reading Prolific's record again for a bonus payment not shown there yet (Prolific
# pays "in the following minutes" after accepting the call; the fifth reading is the last).
PROLIFIC_BONUS_RECONCILE_SECONDS = env.env_seconds_list(ENV, "PROLIFIC_BONUS_RECONCILE_SECONDS", [30, 120, 600, 1800])
# A payment left PAYING is recovered (sent again if Prolific's record shows none of it) no sooner
# than this after its pay call.
PROLIFIC_BONUS_RESEND_AFTER_SECONDS = env.env_int(ENV, "PROLIFIC_BONUS_RESEND_AFTER_SECONDS", 3600, minimum=0)

# --- Webhooks out (annotation.services.webhooks; docs/api.md "Webhooks") ---
# The waits between a delivery's attempts: the Standard Webhooks schedule (5 s, 5 min, 30 min,
# 2 h, 5 h, 10 h, 10 h: eight attempts over about a day and a half), and each attempt's timeout.
WEBHOOK_RETRY_SECONDS = env.env_seconds_list(ENV, "WEBHOOK_RETRY_SECONDS", [5, 300, 1800, 7200, 18000, 36000, 36000])
WEBHOOK_TIMEOUT_SECONDS = env.env_int(ENV, "WEBHOOK_TIMEOUT_SECONDS", 15, minimum=1)
# Endpoints at loopback, private, link-local or reserved addresses are refused, when registered and
# again when each attempt connects (annotation/public_addresses.py); true allows them, for development.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.env_bool(ENV, "WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False)
