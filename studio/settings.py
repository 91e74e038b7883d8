"""Settings for the Route Studio, read from the environment (healthchecks style).

A fresh checkout runs at once: DEBUG on, SQLite in `db.sqlite3` next to `manage.py`. In production
set `DEBUG=False`, `SECRET_KEY`, `ALLOWED_HOSTS` and `DATABASE_URL`.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(key: str, default: str) -> bool:
    return os.getenv(key, default).strip().lower() in ("1", "true", "yes", "on")


def envint(key: str, default: str) -> int:
    return int(os.getenv(key, default))


def envlist(key: str, default: str) -> list[str]:
    return [item.strip() for item in os.getenv(key, default).split(",") if item.strip()]


DEBUG = envbool("DEBUG", "True")

SECRET_KEY = os.getenv("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    # Development only: never used with DEBUG off (see above).
    SECRET_KEY = "dev-only-insecure-key-route-studio"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.forms",
    "django_htmx",
    "ninja",  # serves the API docs' Swagger UI from its own static files, not a CDN
    "axes",  # login throttling (docs/reliability.md)
    "django_ratelimit",
    "django_tasks_db",  # the job queue's table (studio/jobs)
    "studio",
]

MIDDLEWARE = [
    "studio.shared.logs.RequestLogMiddleware",  # outermost: its latency covers every other layer
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "studio.shared.timezones.ViewerTimeZoneMiddleware",  # dates where the reader is
    # Outside CommonMiddleware, so a missing slash is still redirected before "not found".
    "studio.shared.error_pages.FriendlyNotFoundMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# django-axes first: it refuses a locked-out username+IP before the password is even checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "studio.shared.roles.RoleBackend",  # ModelBackend, with permissions in one query
]

ROOT_URLCONF = "studio.urls"
WSGI_APPLICATION = "studio.shared.wsgi.application"

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
            # Template tag libraries live with the code they serve, not in a templatetags/
            # folder of the app, so they are named here.
            "libraries": {
                "labels": "studio.shared.templatetags.labels",
                "suite_format": "studio.shared.templatetags.suite_format",
                "pack_badge": "studio.suites.pack_badge",
                "suggestion_tags": "studio.authoring.suggestion_tags",
            },
        },
    }
]

# Form fields render through templates/studio/shared/_field.html (one wrapper per field).
FORM_RENDERER = "studio.authoring.forms.StudioFormRenderer"

DATABASES = {
    "default": dj_database_url.parse(
        os.getenv("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=envint("DB_CONN_MAX_AGE", "0"),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The web server and the job worker write to one SQLite file: each transaction takes the
    # write lock when it begins (a read that later writes cannot be refused mid-way), and a
    # writer waits up to 20 s for another's commit instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20}
    )
# Several test runs can share one PostgreSQL server when each names its own test database.
if os.getenv("TEST_DATABASE_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}
elif DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not SQLite's default in-memory test database: the job tests start a real worker
    # process (tests/job_worker.py), which must open the same database.
    _test_dir = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    DATABASES["default"]["TEST"] = {"NAME": str(_test_dir / f"studio-test-{os.getpid()}.sqlite3")}

# -- background jobs (studio/jobs) ------------------------------------------------------------------

# Jobs are queued in the studio's own database and run by `manage.py jobs_worker` processes,
# on any number of machines sharing that database (README, "Deploying").
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

# Mail tells publishers that a rollout halted, promoted or waits for them (studio/publishing/rollouts.py).
# A fresh checkout (DEBUG on) prints mail to the console and sends nothing; in production the
# SMTP backend, on STUDIO_MAIL_HOST (localhost when unset). A mail server that is down never
# undoes the step that sent the mail (studio/publishing/rollouts.py).
_MAIL_BACKEND = "console" if DEBUG else "smtp"
MAILERS = {
    "default": {
        "BACKEND": os.environ.get(
            "STUDIO_MAIL_BACKEND", f"django.core.mail.backends.{_MAIL_BACKEND}.EmailBackend"
        ),
        "OPTIONS": {"host": os.environ["STUDIO_MAIL_HOST"]}
        if "STUDIO_MAIL_HOST" in os.environ
        else {},
    }
}
DEFAULT_FROM_EMAIL = os.environ.get("STUDIO_MAIL_FROM", "route-studio@localhost")
# A running job's worker writes a heartbeat this often; a job silent for STALE_AFTER has lost
# its worker (killed, crashed, machine gone) and is queued again, or failed after MAX_ATTEMPTS.
STUDIO_JOB_HEARTBEAT_S = float(os.getenv("STUDIO_JOB_HEARTBEAT_S", "2"))
STUDIO_JOB_STALE_AFTER_S = float(os.getenv("STUDIO_JOB_STALE_AFTER_S", "30"))
# An agent that has not pulled for this long is listed as having stopped reporting (Agents page).
STUDIO_AGENT_SILENT_AFTER_S = envint("STUDIO_AGENT_SILENT_AFTER_S", "600")
# How often each job worker deletes decision events past their profile's retention period.
STUDIO_EVENT_EXPIRY_S = float(os.getenv("STUDIO_EVENT_EXPIRY_S", "3600"))
STUDIO_JOB_MAX_ATTEMPTS = envint("STUDIO_JOB_MAX_ATTEMPTS", "2")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# -- limits and abuse (docs/reliability.md) ---------------------------------------------------------

# One upload or request body: a pack file, a test-case file, an API import. Forms read at most
# this much and say so; a bigger body is refused before anything parses it.
STUDIO_MAX_IMPORT_BYTES = envint("STUDIO_MAX_IMPORT_BYTES", str(5 * 1024 * 1024))
DATA_UPLOAD_MAX_MEMORY_SIZE = STUDIO_MAX_IMPORT_BYTES + 64 * 1024  # room for the other fields

# Signing published packs (docs/operators/signing.md): an Ed25519 private key in PEM, from a file
# or the variable itself, never from the repository. Unset: packs are served unsigned, and agents
# that verify refuse them. `make run` points the file at a dev key it makes outside the checkout.
STUDIO_SIGNING_KEY_FILE = os.getenv("STUDIO_SIGNING_KEY_FILE", "")
STUDIO_SIGNING_KEY = os.getenv("STUDIO_SIGNING_KEY", "")

# Authoring help from a language model (suggestions, the wording of a found fix): any OpenAI-compatible endpoint. The key is
# read from the environment variable *named* by STUDIO_LLM_API_KEY_ENV (empty: no key, e.g. a
# local server); none of this ever goes into a pack. Without a base URL and a model the
# suggestion pages say how to configure them.
STUDIO_LLM_BASE_URL = os.getenv("STUDIO_LLM_BASE_URL", "")
STUDIO_LLM_MODEL = os.getenv("STUDIO_LLM_MODEL", "")
STUDIO_LLM_API_KEY_ENV = os.getenv("STUDIO_LLM_API_KEY_ENV", "STUDIO_LLM_API_KEY")
STUDIO_LLM_TIMEOUT_S = envint("STUDIO_LLM_TIMEOUT_S", "30")

# Sign-in throttling (django-axes): 5 failures for one username from one IP lock that pair out for
# 15 minutes. Attempts live in the database, so the lockout holds across every studio process.
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", "5")
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MINUTES", "15"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # successful sign-ins need no row each; lockouts use attempts
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"

# Per-token rate limits of the two endpoints agents and scripts call in a loop ("count/period",
# django-ratelimit's notation). Counters live in the cache: REDIS_URL shares them across processes;
# without it each process counts alone (LocMemCache), so N workers allow up to N times the rate.
STUDIO_RATE_ROUTE = os.getenv("STUDIO_RATE_ROUTE", "600/m")
STUDIO_RATE_PACK_PULL = os.getenv("STUDIO_RATE_PACK_PULL", "1200/m")
# Event batches per token (each up to 500 events): 600/m is 5,000 events/s from one agent.
STUDIO_RATE_EVENTS = os.getenv("STUDIO_RATE_EVENTS", "600/m")
# Analysis jobs (suite runs, overlap checkups, replays) unfinished at once: per person and per
# profile (studio/jobs/limits.py); a request over either gets a 429 that says which.
STUDIO_JOBS_PER_PERSON = envint("STUDIO_JOBS_PER_PERSON", "3")
STUDIO_JOBS_PER_PROFILE = envint("STUDIO_JOBS_PER_PROFILE", "6")
if os.getenv("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # django-ratelimit flags LocMemCache as not shared (E003, W001): true, and accepted above.
    SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "profile-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.getenv("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.getenv("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# -- production posture: every default below is the safe one once DEBUG is off ------------------

SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", "False" if DEBUG else "True")
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Behind a proxy that terminates TLS, set BEHIND_PROXY=True: Django then trusts the proxy's
# X-Forwarded-Proto. Only do so when the proxy overwrites that header on every request.
if envbool("BEHIND_PROXY", "False"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", str(not DEBUG))
# Load balancers probe over plain HTTP; a redirect would read as "down".
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000")
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "True")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "True")
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Enforced in development too, so a page that needs an inline script fails its browser test
# instead of failing in production. Scripts and styles are our own files under static/.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}

# In development WhiteNoise serves straight from the finders (no collectstatic needed).
WHITENOISE_AUTOREFRESH = DEBUG
WHITENOISE_USE_FINDERS = DEBUG

# One JSON line per request on stderr (studio.shared.logs); other loggers go the same way.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "studio.shared.logs.JsonFormatter"}},
    "filters": {"client_errors": {"()": "studio.shared.logs.ClientErrorsWithoutTraceback"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["stderr"], "level": os.getenv("LOG_LEVEL", "INFO")},
    "loggers": {
        # runserver's own access line would duplicate studio.requests.
        "django.server": {"level": "WARNING"},
        # A refused permission or a bad request is a 4xx: one line, no traceback.
        "django.request": {"filters": ["client_errors"]},
        # django-axes logs every sign-in at INFO; its lockouts are WARNING.
        "axes": {"level": "WARNING"},
    },
}
