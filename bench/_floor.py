"""Settings for the load bench's framework floor: the app's own settings and
middleware, with URLs (bench/_floor_urls.py) that add one view doing nothing,
so that the same web server serving it shows what a request costs before any work."""

from config.settings import *  # noqa: F403  (the settings under test, unchanged but for the URLs)

ROOT_URLCONF = "bench._floor_urls"
