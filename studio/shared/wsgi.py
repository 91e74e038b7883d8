"""WSGI entry point for serving the studio (gunicorn studio.shared.wsgi).

Agents' token pulls are answered by `studio.agents.fast_pulls` in front of Django's middleware stack;
every other request goes to Django as usual.
"""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

django_application = get_wsgi_application()

from studio.agents.fast_pulls import FastPulls  # noqa: E402  (needs the apps loaded just above)

# Load the URLconf, and with it every view and the API, now rather than at the first request:
# under `gunicorn --preload` (make serve) each worker forks from a process that has it all, so
# a worker recycled after --max-requests is ready at once instead of after ~1 s of imports.
get_resolver().url_patterns  # noqa: B018
connections.close_all()  # a forked worker must never share a parent's database connection

application = FastPulls(django_application)
