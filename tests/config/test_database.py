import pytest
from django.db import connection
from django.db.backends.sqlite3.base import DatabaseWrapper

from config import env


@pytest.mark.django_db
def test_sqlite_default_opens_in_wal_mode_with_immediate_transactions(tmp_path):
    settings_dict = {**connection.settings_dict, **env.database({}, tmp_path)}
    wrapper = DatabaseWrapper(settings_dict, alias="wal-check")
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
        assert wrapper.transaction_mode == "IMMEDIATE"
    finally:
        wrapper.close()


@pytest.mark.django_db
def test_postgres_is_reached_through_psycopg3():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only")
    import psycopg

    assert isinstance(connection.connection, psycopg.Connection)
