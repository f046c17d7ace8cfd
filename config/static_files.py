"""Static files for a deployment: collected, and gzipped, by the web server itself at start-up.

On the embedded default WhiteNoise serves the source folders (WHITENOISE_USE_FINDERS). On a
database server it serves STATIC_ROOT, which nobody has to fill by hand: `config.wsgi` and
`config.asgi` call `static_collect_if_stale()` before they build the app, and it runs
`collectstatic` when a source file is missing from STATIC_ROOT or newer than its copy (the test
collectstatic itself uses to skip a file, in whole seconds). Collected rather than served from the finders, because
collectstatic also writes the gzipped variants: the participant page's scripts travel at a third
of their size. A start with nothing to collect costs one stat of each of the ~200 files (25 ms);
a collection about a second of CPU, once after each code update.
"""

import fcntl
import logging
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

logger = logging.getLogger(__name__)


def static_collect_if_stale() -> int:
    """Run collectstatic when STATIC_ROOT misses a source file or holds an older copy of one;
    several web worker processes starting at once collect once (a lock in STATIC_ROOT).
    How many files were stale."""
    if settings.WHITENOISE_USE_FINDERS:
        return 0  # served from the source folders
    root = Path(settings.STATIC_ROOT)
    if not static_stale_files(root):
        return 0
    try:
        root.mkdir(parents=True, exist_ok=True)
        with (root / ".collect.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            stale = static_stale_files(root)  # another worker may have collected meanwhile
            if stale:
                call_command("collectstatic", "--noinput", verbosity=0)
                logger.info(
                    "collected static files into %s: %d were missing or older than their source", root, len(stale)
                )
            return len(stale)
    except PermissionError as error:
        raise ImproperlyConfigured(
            f"STATIC_ROOT ({root}, DATA_DIR/static) must be writable by the web server, which collects the static "
            f"files there at start-up ({error}); or run `manage.py collectstatic` as a user who can write it"
        ) from None


def static_stale_files(root: Path) -> list[str]:
    """The static files whose copy in `root` is missing or older than the source."""
    stale, seen = [], set()
    for finder in finders.get_finders():
        for path, storage in finder.list(None):
            prefixed = str(Path(getattr(storage, "prefix", None) or "") / path)
            if prefixed in seen:
                continue  # the first finder's file is the one collected
            seen.add(prefixed)
            copy = root / prefixed
            # Whole seconds, as collectstatic compares them: it skips what this does not count.
            if not copy.exists() or int(copy.stat().st_mtime) < int(Path(storage.path(path)).stat().st_mtime):
                stale.append(prefixed)
    return stale
