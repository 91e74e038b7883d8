#!/usr/bin/env bash
# Load test of the studio under gunicorn + PostgreSQL, on loopback only (docs/reliability.md).
#
# Sets up a scratch database, loads the demo, publishes it to production, creates an API token
# (the demo user, every role) and a read token, starts gunicorn (one sync worker per core by default: WORKERS), then runs
# wrk against the playground endpoint and the pack-pull endpoint (200s, and 304s with
# If-None-Match) at increasing concurrency. Each run is bounded in time (DURATION) and in requests
# (MAX_REQUESTS per wrk thread). Everything is torn down on exit, even on failure.
#
#   bench/load_test.sh                       # all rows
#   CONCURRENCY="16 64" DURATION=10s bench/load_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PG=${PG:-postgres://postgres@127.0.0.1:5432}
DB=loadtest_$$
PORT=${PORT:-8765}
DURATION=${DURATION:-10s}
MAX_REQUESTS=${MAX_REQUESTS:-50000}
CONCURRENCY=${CONCURRENCY:-"1 4 16 64"}
WORKERS=${WORKERS:-$(nproc)}  # wrk and PostgreSQL share these cores: see docs/reliability.md
OUT=${OUT:-bench/out/load_results.tsv}  # bench/out/ is ignored by git
WORK=$(mktemp -d)
PY=.venv/bin/python

export DATABASE_URL="$PG/$DB" DEBUG=False SECRET_KEY="load-test-$$" ALLOWED_HOSTS=127.0.0.1 \
  SECURE_SSL_REDIRECT=False SECURE_COOKIES=False DB_CONN_MAX_AGE=600 LOG_LEVEL=WARNING \
  STUDIO_RATE_ROUTE=${STUDIO_RATE_ROUTE:-10000000/m} \
  STUDIO_RATE_PACK_PULL=${STUDIO_RATE_PACK_PULL:-10000000/m}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

cleanup() {
  if [[ -f $WORK/gunicorn.pid ]]; then kill "$(cat "$WORK/gunicorn.pid")" 2>/dev/null || true; sleep 1; fi
  psql "$PG/postgres" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
[[ -n ${KEEP:-} ]] && trap - EXIT

psql "$PG/postgres" -qc "CREATE DATABASE $DB" >/dev/null
$PY manage.py migrate --no-input -v 0
$PY manage.py load_demo --force >/dev/null  # a scratch database, dropped on exit
$PY manage.py shell -v 0 -c "
from django.contrib.auth import get_user_model
from studio.models import Profile
from studio.publishing.versions import promote, publish
from studio.shared.tokens import create_api_token, create_read_token
user = get_user_model().objects.get(username='demo')
profile = Profile.objects.get(slug='support')
version = publish(profile, user=user, note='load test')
promote(version, 'production', user=user)
print(create_api_token(user, 'load')[1])
print(create_read_token(profile, 'load', user=user)[1])
print(version.checksum)
" >"$WORK/secrets"
{ read -r API_TOKEN; read -r READ_TOKEN; read -r CHECKSUM; } <"$WORK/secrets"

.venv/bin/gunicorn studio.shared.wsgi --bind "127.0.0.1:$PORT" --workers "$WORKERS" --timeout 30 \
  --pid "$WORK/gunicorn.pid" --daemon --error-logfile "$WORK/gunicorn.log"
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done

# wrk: the request (method, body, headers) and a report line per run.
cat >"$WORK/load.lua" <<'LUA'
local max_requests = tonumber(os.getenv("MAX_REQUESTS"))
local count = 0
wrk.method = os.getenv("METHOD")
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
if os.getenv("BODY") ~= "" then
  wrk.body = os.getenv("BODY")
  wrk.headers["Content-Type"] = "application/json"
end
if os.getenv("ETAG") ~= "" then wrk.headers["If-None-Match"] = os.getenv("ETAG") end
local expected = tonumber(os.getenv("EXPECT"))
local wrong = 0
function response(status, headers, body)
  if status ~= expected then wrong = wrong + 1 end
  count = count + 1
  if count >= max_requests then wrk.thread:stop() end
end
function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout + summary.errors.status
  local secs = summary.duration / 1e6
  io.write(string.format("RESULT\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%d\n", summary.requests,
    summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, errors))
end
LUA

ROUTE_BODY='{"message": "I was charged twice for my last order, can I get a refund?"}'
run() {  # name method path token body etag expected-status
  local name=$1 method=$2 path=$3 token=$4 body=$5 etag=$6 expect=$7
  # Warm-up, not reported: every worker imports, connects and fills its caches first.
  METHOD=$method TOKEN=$token BODY=$body ETAG=$etag EXPECT=$expect MAX_REQUESTS=$MAX_REQUESTS \
    wrk -t2 -c"$WORKERS" -d2s -s "$WORK/load.lua" "http://127.0.0.1:$PORT$path" >/dev/null
  for c in $CONCURRENCY; do
    local threads=$((c < 2 ? c : 2))
    local line
    line=$(METHOD=$method TOKEN=$token BODY=$body ETAG=$etag EXPECT=$expect MAX_REQUESTS=$MAX_REQUESTS \
      wrk -t"$threads" -c"$c" -d"$DURATION" --timeout 5s -s "$WORK/load.lua" \
      "http://127.0.0.1:$PORT$path" | grep '^RESULT' | cut -f2-)
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf '%s\t%s\t%s\t%s\n' "$name" "$c" "$line" "$load" | tee -a "$OUT"
  done
}

mkdir -p "$(dirname "$OUT")"
[[ -f $OUT ]] || printf 'endpoint\tconcurrency\trequests\treq_per_s\tp50_ms\tp95_ms\tp99_ms\terrors\tload1\n' >"$OUT"
echo "# $(date -u +%FT%TZ) workers=$WORKERS duration=$DURATION cores=$(nproc)" | tee -a "$OUT"
run pack-pull GET /api/profiles/support/packs/production "$READ_TOKEN" "" "" 200
run pack-pull-304 GET /api/profiles/support/packs/production "$READ_TOKEN" "" "\"$CHECKSUM\"" 304
run playground POST /api/profiles/support/route "$API_TOKEN" "$ROUTE_BODY" "" 200
