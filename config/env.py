"""Read settings from environment variables.

Pure functions over a mapping, so that tests can feed them any environment.
Every bad or missing value raises ImproperlyConfigured naming the variable.
"""

import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

DATABASE_SCHEMES = {"sqlite", "postgres", "postgresql", "pgsql"}
BROKER_SCHEMES = {"redis", "rediss", "amqp", "amqps", "pyamqp", "filesystem", "memory"}
STORAGE_BACKENDS = {"local", "s3"}


def env_bool(environ: Mapping[str, str], name: str, default: bool) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def env_int(environ: Mapping[str, str], name: str, default: int, *, minimum: int = 0) -> int:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def env_list(environ: Mapping[str, str], name: str, default: list[str]) -> list[str]:
    raw = environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_seconds_list(environ: Mapping[str, str], name: str, default: list[int]) -> list[int]:
    """A comma-separated list of whole seconds, at least one, none negative."""
    items = env_list(environ, name, [str(s) for s in default])
    try:
        values = [int(item) for item in items]
    except ValueError:
        raise ImproperlyConfigured(
            f"{name} must be whole seconds separated by commas, not {environ.get(name)!r}"
        ) from None
    if not values or min(values) < 0:
        raise ImproperlyConfigured(f"{name} must list at least one wait of 0 seconds or more")
    return values


def http_url(environ: Mapping[str, str], name: str, default: str) -> str:
    value = environ.get(name, "").strip() or default
    if urlsplit(value).scheme not in ("http", "https") or not urlsplit(value).netloc:
        raise ImproperlyConfigured(f"{name} must be an http(s) URL, not {value!r}")
    return value


# DRF reads a rate as "<requests>/<period>" and looks only at the period's first letter.
_RATE = re.compile(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)")


def rate(environ: Mapping[str, str], name: str, default: str) -> str:
    """A request rate such as "120/minute" (periods: second, minute, hour, day)."""
    value = environ.get(name, "").strip() or default
    if not _RATE.fullmatch(value):
        raise ImproperlyConfigured(f"{name} must be a rate like 120/minute or 5000/day, not {value!r}")
    return value


def is_embedded(environ: Mapping[str, str]) -> bool:
    """The embedded default: SQLite and local files, nothing else to run."""
    url = environ.get("DATABASE_URL", "")
    on_sqlite = url == "" or url.startswith("sqlite:")
    return on_sqlite and environ.get("STORAGE_BACKEND", "local") == "local"


def secret_key(environ: Mapping[str, str], data_dir: Path) -> str:
    key = environ.get("SECRET_KEY", "")
    if key:
        return key
    if not is_embedded(environ):
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DATABASE_URL points to a server or STORAGE_BACKEND is s3"
        )
    return _local_secret_key(data_dir)


def _local_secret_key(data_dir: Path) -> str:
    # The embedded default keeps one random key per data folder, so sessions
    # and signed audio URLs survive restarts without anyone setting a secret.
    from django.core.management.utils import get_random_secret_key

    path = data_dir / "secret_key"
    if not path.exists():
        path.write_text(get_random_secret_key())
        path.chmod(0o600)
    return path.read_text().strip()


def debug(environ: Mapping[str, str]) -> bool:
    """Off unless DEBUG=true is set, and then only on the embedded default: debug
    pages show settings and every URL pattern to whoever gets an error."""
    value = env_bool(environ, "DEBUG", default=False)
    if value and not is_embedded(environ):
        raise ImproperlyConfigured("DEBUG must be False when DATABASE_URL points to a server or STORAGE_BACKEND is s3")
    return value


def database(environ: Mapping[str, str], data_dir: Path) -> dict:
    url = environ.get("DATABASE_URL", "")
    if not url:
        config = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(data_dir / "db.sqlite3")}
    else:
        scheme = urlsplit(url).scheme
        if scheme not in DATABASE_SCHEMES:
            raise ImproperlyConfigured(f"DATABASE_URL must be a sqlite:/// or postgres:// URL, not scheme {scheme!r}")
        try:
            # Persistent connections without a health check: the check costs a
            # round trip on every request; a dropped connection fails one request.
            config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=False)
        except ValueError as error:
            raise ImproperlyConfigured(f"DATABASE_URL is not a valid URL: {error}") from None
        if scheme == "sqlite" and not config.get("NAME"):
            raise ImproperlyConfigured("DATABASE_URL names no SQLite file (use sqlite:////abs/path.db)")
    if config["ENGINE"].endswith("sqlite3"):
        config["OPTIONS"] = _sqlite_options()
    else:
        config["OPTIONS"] = _postgres_options(environ)
    return config


def _postgres_options(environ: Mapping[str, str]) -> dict:
    # Server-side binding lets psycopg prepare a statement the second time a
    # connection runs it, so PostgreSQL stops planning the hot path's queries
    # again on every request (bench/annotate_load.py: its CPU per annotated
    # clip fell from 4.9 to 2.8 ms). A transaction-pooling PgBouncer older than
    # 1.21 cannot keep prepared statements: DATABASE_PREPARED_STATEMENTS=false.
    if not env_bool(environ, "DATABASE_PREPARED_STATEMENTS", True):
        return {}
    return {"server_side_binding": True, "prepare_threshold": 2}


def _sqlite_options() -> dict:
    # WAL lets the web server read while the worker writes; IMMEDIATE takes the
    # write lock at BEGIN, so concurrent writers wait instead of failing midway.
    return {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }


def storages(environ: Mapping[str, str], media_root: Path) -> dict:
    """Return STORAGES for the chosen storage backend."""
    backend = environ.get("STORAGE_BACKEND", "local")
    if backend not in STORAGE_BACKENDS:
        raise ImproperlyConfigured(f"STORAGE_BACKEND must be 'local' or 's3', not {backend!r}")
    staticfiles = {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"}
    if backend == "local":
        default = {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(media_root)},
        }
        return {"default": default, "staticfiles": staticfiles}
    bucket = environ.get("AWS_STORAGE_BUCKET_NAME", "")
    if not bucket:
        raise ImproperlyConfigured("AWS_STORAGE_BUCKET_NAME must be set when STORAGE_BACKEND=s3")
    options = {
        "bucket_name": bucket,
        "region_name": environ.get("AWS_S3_REGION_NAME") or None,
        "endpoint_url": environ.get("AWS_S3_ENDPOINT_URL") or None,
        "access_key": environ.get("AWS_ACCESS_KEY_ID") or None,
        "secret_key": environ.get("AWS_SECRET_ACCESS_KEY") or None,
        # Objects stay private; browsers only get presigned URLs.
        "default_acl": None,
        "querystring_auth": True,
        # SigV4 presigned URLs: the only kind newer regions and most S3-compatible servers accept.
        "signature_version": "s3v4",
        "file_overwrite": False,
    }
    default = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}
    return {"default": default, "staticfiles": staticfiles}


def celery(environ: Mapping[str, str], data_dir: Path) -> dict:
    """Celery settings: a real broker when CELERY_BROKER_URL is set, else an
    embedded file-system broker that `make run` serves with a worker."""
    url = environ.get("CELERY_BROKER_URL", "")
    always_eager = env_bool(environ, "CELERY_TASK_ALWAYS_EAGER", default=False)
    transport_options: dict = {}
    if not url:
        url = "filesystem://"
        queue_dir = data_dir / "celery" / "queue"
        processed = data_dir / "celery" / "processed"
        queue_dir.mkdir(parents=True, exist_ok=True)
        processed.mkdir(parents=True, exist_ok=True)
        transport_options = {
            "data_folder_in": str(queue_dir),
            "data_folder_out": str(queue_dir),
            "processed_folder": str(processed),
            "store_processed": False,
            # The exchange table; kombu's default is a folder "control" in the working directory.
            "control_folder": str(data_dir / "celery" / "control"),
        }
    scheme = urlsplit(url).scheme
    if scheme not in BROKER_SCHEMES:
        raise ImproperlyConfigured(
            f"CELERY_BROKER_URL must be a redis://, amqp:// or filesystem:// URL, not scheme {scheme!r}"
        )
    if scheme in ("redis", "rediss"):
        transport_options = {"visibility_timeout": _visibility_timeout(environ)}
    return {
        "CELERY_BROKER_URL": url,
        "CELERY_BROKER_TRANSPORT_OPTIONS": transport_options,
        "CELERY_TASK_ALWAYS_EAGER": always_eager,
        "CELERY_TASK_EAGER_PROPAGATES": True,
        "CELERY_TASK_IGNORE_RESULT": True,
        "CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP": True,
    }


def _visibility_timeout(environ: Mapping[str, str]) -> int:
    # Every task is acks_late, so its message stays unacknowledged while it runs, and Redis hands
    # an unacknowledged message to another worker once this many seconds have passed: kombu's hour
    # is shorter than a long training, whose message would then be delivered again every hour (the
    # job's claim refuses each copy, but a worker wakes for it). A day covers the longest runs. A
    # dead worker's job does not wait for it: the workers' sweep queues it again once its heartbeat
    # stops (annotation.shared.jobs), and its old message, when it comes back, finds the job taken.
    return env_int(environ, "CELERY_VISIBILITY_TIMEOUT", 24 * 3600, minimum=60)


def folder(environ: Mapping[str, str], name: str, default: Path) -> Path:
    """An absolute folder path (it need not exist yet); a relative one is read from the working
    directory. A path that names a file is refused."""
    raw = environ.get(name, "").strip()
    path = Path(raw).expanduser().resolve() if raw else default
    if path.exists() and not path.is_dir():
        raise ImproperlyConfigured(f"{name} must be a folder, not the file {path}")
    return path
