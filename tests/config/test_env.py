"""Settings from the environment: pure functions, no database."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env

PG = "postgres://postgres@127.0.0.1:5432/test"


def test_embedded_default_is_sqlite_in_the_data_folder_with_wal(tmp_path):
    config = env.database({}, tmp_path)

    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == str(tmp_path / "db.sqlite3")
    assert "journal_mode=WAL" in config["OPTIONS"]["init_command"]


def test_database_url_switches_to_postgresql(tmp_path):
    config = env.database({"DATABASE_URL": PG}, tmp_path)

    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["HOST"], config["PORT"], config["USER"]) == ("test", "127.0.0.1", 5432, "postgres")
    assert config["OPTIONS"] == {"server_side_binding": True, "prepare_threshold": 2}


def test_prepared_statements_can_be_turned_off_for_poolers(tmp_path):
    config = env.database({"DATABASE_URL": PG, "DATABASE_PREPARED_STATEMENTS": "false"}, tmp_path)

    assert config["OPTIONS"] == {}


def test_sqlite_database_url(tmp_path):
    config = env.database({"DATABASE_URL": f"sqlite:///{tmp_path}/other.db"}, tmp_path)

    assert config["NAME"] == f"{tmp_path}/other.db"
    assert "journal_mode=WAL" in config["OPTIONS"]["init_command"]


@pytest.mark.parametrize("url", ["mysql://root@localhost/db", "not a url", "redis://localhost"])
def test_unsupported_database_url_names_the_variable(tmp_path, url):
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        env.database({"DATABASE_URL": url}, tmp_path)


def test_secret_key_is_generated_once_on_the_embedded_default(tmp_path):
    first = env.secret_key({}, tmp_path)

    assert len(first) >= 50
    assert env.secret_key({}, tmp_path) == first


@pytest.mark.parametrize("environ", [{"DATABASE_URL": PG}, {"STORAGE_BACKEND": "s3"}])
def test_secret_key_is_required_outside_the_embedded_default(tmp_path, environ):
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be set"):
        env.secret_key(environ, tmp_path)


def test_debug_is_off_unless_asked_for_on_the_embedded_default():
    assert env.debug({}) is False
    assert env.debug({"DEBUG": "true"}) is True
    assert env.debug({"DEBUG": "false"}) is False
    assert env.debug({"DATABASE_URL": PG}) is False


EMBEDDED_REQUESTS = """
import django, json
django.setup()
from django.conf import settings
from django.test import Client
answers = {"debug": settings.DEBUG}
for host in ("127.0.0.1", "localhost"):
    client = Client(HTTP_HOST=host)
    missing = client.get("/no-such-page/")
    answers[host] = [missing.status_code, missing.content.decode()]
    for path in ("/static/annotation/task.js", "/static/admin/css/base.css"):
        found = client.get(path)
        answers[host + path] = found.status_code
print(json.dumps(answers))
"""


def test_the_embedded_default_shows_no_debug_pages_and_still_serves_static_files(tmp_path):
    """A fresh process with nothing set, as `make run` starts: a 404 lists no URL
    patterns, and the participant's and the admin's static files are there."""
    import json
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", EMBEDDED_REQUESTS],
        env={"DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        check=True,
    )

    answers = json.loads(result.stdout)
    assert answers["debug"] is False
    for host in ("127.0.0.1", "localhost"):
        status, page = answers[host]
        assert status == 404 and "URLconf" not in page and "admin/" not in page
        assert answers[host + "/static/annotation/task.js"] == 200
        assert answers[host + "/static/admin/css/base.css"] == 200


def test_debug_true_is_refused_outside_the_embedded_default():
    with pytest.raises(ImproperlyConfigured, match="DEBUG must be False"):
        env.debug({"DATABASE_URL": PG, "DEBUG": "true"})


def test_bad_boolean_names_the_variable():
    with pytest.raises(ImproperlyConfigured, match="DEBUG must be true or false, not 'maybe'"):
        env.debug({"DEBUG": "maybe"})


def test_bad_integer_names_the_variable():
    with pytest.raises(ImproperlyConfigured, match="IMPORT_WORKERS must be an integer"):
        env.env_int({"IMPORT_WORKERS": "two"}, "IMPORT_WORKERS", 1)
    with pytest.raises(ImproperlyConfigured, match="IMPORT_WORKERS must be at least 1"):
        env.env_int({"IMPORT_WORKERS": "0"}, "IMPORT_WORKERS", 1, minimum=1)


def test_local_storage_by_default(tmp_path):
    storages = env.storages({}, tmp_path)

    assert storages["default"]["BACKEND"] == "django.core.files.storage.FileSystemStorage"
    assert storages["default"]["OPTIONS"]["location"] == str(tmp_path)


def test_s3_storage_takes_bucket_region_endpoint_and_credentials(tmp_path):
    storages = env.storages(
        {
            "STORAGE_BACKEND": "s3",
            "AWS_STORAGE_BUCKET_NAME": "clips",
            "AWS_S3_REGION_NAME": "eu-west-1",
            "AWS_S3_ENDPOINT_URL": "http://127.0.0.1:9000",
            "AWS_ACCESS_KEY_ID": "id",
            "AWS_SECRET_ACCESS_KEY": "secret",
        },
        tmp_path,
    )

    options = storages["default"]["OPTIONS"]
    assert storages["default"]["BACKEND"] == "storages.backends.s3.S3Storage"
    assert (options["bucket_name"], options["region_name"], options["endpoint_url"]) == (
        "clips",
        "eu-west-1",
        "http://127.0.0.1:9000",
    )
    assert (options["access_key"], options["secret_key"], options["querystring_auth"]) == ("id", "secret", True)


def test_s3_without_bucket_names_the_variable(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="AWS_STORAGE_BUCKET_NAME must be set"):
        env.storages({"STORAGE_BACKEND": "s3"}, tmp_path)


def test_unknown_storage_backend_names_the_variable(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="STORAGE_BACKEND must be 'local' or 's3', not 'ftp'"):
        env.storages({"STORAGE_BACKEND": "ftp"}, tmp_path)


def test_embedded_broker_is_the_file_system(tmp_path):
    config = env.celery({}, tmp_path)

    assert config["CELERY_BROKER_URL"] == "filesystem://"
    assert config["CELERY_BROKER_TRANSPORT_OPTIONS"]["data_folder_in"] == str(tmp_path / "celery" / "queue")
    assert config["CELERY_TASK_ALWAYS_EAGER"] is False


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "amqp://guest:guest@127.0.0.1:5672//"])
def test_broker_url_switches_to_redis_or_rabbitmq(tmp_path, url):
    assert env.celery({"CELERY_BROKER_URL": url}, tmp_path)["CELERY_BROKER_URL"] == url


def test_unsupported_broker_names_the_variable(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="CELERY_BROKER_URL must be"):
        env.celery({"CELERY_BROKER_URL": "kafka://localhost"}, tmp_path)


def test_settings_module_refuses_to_start_without_secret_key_on_postgres(tmp_path):
    """Start-up itself stops: importing the settings in a fresh process fails."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", "import config.settings"],
        env={"DATABASE_URL": PG, "DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )

    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set" in result.stderr


def test_http_url_setting():
    assert (
        env.http_url({}, "PROLIFIC_API_URL", "https://api.prolific.com/api/v1/") == "https://api.prolific.com/api/v1/"
    )
    assert (
        env.http_url({"PROLIFIC_API_URL": "http://127.0.0.1:9/api/"}, "PROLIFIC_API_URL", "x")
        == "http://127.0.0.1:9/api/"
    )
    with pytest.raises(ImproperlyConfigured, match="PROLIFIC_API_URL must be an http\\(s\\) URL, not 'ftp://x'"):
        env.http_url({"PROLIFIC_API_URL": "ftp://x"}, "PROLIFIC_API_URL", "https://a/")


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "rediss://redis.example.org:6380/0"])
def test_redis_redelivers_an_unacknowledged_task_only_after_the_longest_run(tmp_path, url):
    # acks_late: a task's message stays unacknowledged while it runs; Redis hands it to another
    # worker after the visibility timeout (kombu's default: one hour, shorter than a long training).
    options = env.celery({"CELERY_BROKER_URL": url}, tmp_path)["CELERY_BROKER_TRANSPORT_OPTIONS"]
    assert options == {"visibility_timeout": 24 * 3600}

    longer = env.celery({"CELERY_BROKER_URL": url, "CELERY_VISIBILITY_TIMEOUT": "172800"}, tmp_path)
    assert longer["CELERY_BROKER_TRANSPORT_OPTIONS"]["visibility_timeout"] == 172800
    with pytest.raises(ImproperlyConfigured, match="CELERY_VISIBILITY_TIMEOUT must be at least"):
        env.celery({"CELERY_BROKER_URL": url, "CELERY_VISIBILITY_TIMEOUT": "10"}, tmp_path)
