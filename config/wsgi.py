import os

import django
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)

from config.static_files import static_collect_if_stale  # noqa: E402 (needs the settings)

# Before the app is built: WhiteNoise lists STATIC_ROOT's files once, when its middleware starts.
static_collect_if_stale()
application = get_wsgi_application()
