"""The web server's start-up collection of static files (config/static_files.py): it collects what
is missing or older than its source, once, and nothing when all is current."""

import os
import time

import pytest

from config.static_files import static_collect_if_stale, static_stale_files


@pytest.fixture
def sources(settings, tmp_path):
    source = tmp_path / "source"
    (source / "annotation").mkdir(parents=True)
    (source / "annotation" / "task.js").write_text("let version = 1;\n" * 100)
    settings.STATICFILES_DIRS = [source]
    settings.STATIC_ROOT = str(tmp_path / "static_root")
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
    }
    settings.WHITENOISE_USE_FINDERS = False
    return source


def test_a_fresh_static_root_is_filled_with_the_files_and_their_gzipped_variants(sources, tmp_path):
    assert static_collect_if_stale() > 100  # the admin's, the API docs' and ours
    root = tmp_path / "static_root"
    assert (root / "annotation" / "task.js").read_text() == (sources / "annotation" / "task.js").read_text()
    assert (root / "annotation" / "task.js.gz").exists()
    assert (root / "admin" / "css" / "base.css").exists()
    assert static_collect_if_stale() == 0 and static_stale_files(root) == []


def test_a_changed_source_is_collected_again_at_the_next_start(sources, tmp_path):
    static_collect_if_stale()
    task_js = sources / "annotation" / "task.js"
    task_js.write_text("let version = 2;\n")
    later = time.time() + 5  # as a `git pull` an hour after the last start
    os.utime(task_js, (later, later))

    assert static_collect_if_stale() == 1
    assert (tmp_path / "static_root" / "annotation" / "task.js").read_text() == "let version = 2;\n"


def test_served_from_the_sources_nothing_is_collected(sources, settings, tmp_path):
    settings.WHITENOISE_USE_FINDERS = True

    assert static_collect_if_stale() == 0
    assert not (tmp_path / "static_root").exists()
