#!/usr/bin/env bash
# The clients' CI (run by .ci/run): builds cmd/server, starts three servers
# on fresh databases on free loopback ports (one as configured by default,
# one with one worker and a queue of one, so bursts get 429, one whose
# OpenTelemetry ingest grades after 200 ms and keeps unmatched traces), with real API
# keys (a bootstrap admin key, and on each server a key with every other
# scope made with it), runs the TypeScript and Python clients' tests
# against them, and stops the servers and drops the databases at the end,
# even on failure.
#
# Needs Go, Postgres at TOOLSCORE_TEST_DATABASE_URL's host (trust auth, as
# in CI), node 20 with npm, and /usr/bin/python3 with python3-pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

pg=${TOOLSCORE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
base=${pg%%\?*}
base=${base%/*}                      # postgres://user@host:port
query=${pg#*\?}
[ "$query" = "$pg" ] && query=""

work=$(mktemp -d)
pids=()
dbs=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for db in "${dbs[@]}"; do psql "$base/postgres${query:+?$query}" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; done
  if [ "$rc" -ne 0 ]; then
    for log in "$work"/*.log; do [ -f "$log" ] && { echo "--- $log (last 20 lines)"; tail -n 20 "$log"; }; done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

echo "-- build cmd/server"
go build -o "$work/toolscore-server" ./cmd/server

# start NAME [ENV=VALUE...]: a server on a fresh database and a free port;
# sets started_url to its base URL once /readyz answers. (Not run in a
# subshell, so that cleanup sees its pid and database.)
started_url=""
start() {
  local name=$1; shift
  local db="toolscore_clients_${name}_$$_$RANDOM"
  psql "$base/postgres${query:+?$query}" -qc "CREATE DATABASE $db" >/dev/null
  dbs+=("$db")
  env DATABASE_URL="$base/$db${query:+?$query}" TOOLSCORE_ADDR=127.0.0.1:0 TOOLSCORE_LOG_LEVEL=info \
    TOOLSCORE_BOOTSTRAP_KEY="$TOOLSCORE_ADMIN_KEY" "$@" \
    "$work/toolscore-server" >"$work/$name.log" 2>&1 &
  pids+=("$!")
  local addr=""
  for _ in $(seq 1 300); do
    addr=$(grep -o '"msg":"listening","addr":"[^"]*"' "$work/$name.log" | head -n 1 | sed 's/.*"addr":"\([^"]*\)"/\1/') || true
    [ -n "$addr" ] && curl -fsS "http://$addr/readyz" >/dev/null 2>&1 && break
    addr=""
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "server $name did not start"; return 1; }
  started_url="http://$addr"
}

# work_key URL: a key of URL's default project with every scope but admin,
# made with the bootstrap admin key.
work_key() {
  curl -fsS "$1/v1/keys" -H "Authorization: Bearer $TOOLSCORE_ADMIN_KEY" -H 'Content-Type: application/json' \
    -d '{"name": "clients-ci", "scopes": ["ingest", "read", "contracts:write", "regrades", "runs"]}' |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}

# The bootstrap key of both servers' default project (admin only).
TOOLSCORE_ADMIN_KEY="clients-ci-bootstrap-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
export TOOLSCORE_ADMIN_KEY

start main
TOOLSCORE_URL=$started_url
TOOLSCORE_API_KEY=$(work_key "$TOOLSCORE_URL")
start tiny TOOLSCORE_WORKERS=1 TOOLSCORE_QUEUE=1
TOOLSCORE_TINY_URL=$started_url
TOOLSCORE_TINY_API_KEY=$(work_key "$TOOLSCORE_TINY_URL")
start otel TOOLSCORE_OTLP_QUIET=200ms TOOLSCORE_OTLP_UNMATCHED=keep
TOOLSCORE_OTEL_URL=$started_url
TOOLSCORE_OTEL_API_KEY=$(work_key "$TOOLSCORE_OTEL_URL")
[ -n "$TOOLSCORE_API_KEY" ] && [ -n "$TOOLSCORE_TINY_API_KEY" ] && [ -n "$TOOLSCORE_OTEL_API_KEY" ] || { echo "could not make the work keys"; exit 1; }
export TOOLSCORE_URL TOOLSCORE_TINY_URL TOOLSCORE_OTEL_URL TOOLSCORE_API_KEY TOOLSCORE_TINY_API_KEY TOOLSCORE_OTEL_API_KEY
echo "-- servers: $TOOLSCORE_URL, $TOOLSCORE_TINY_URL (1 worker, queue 1), $TOOLSCORE_OTEL_URL (OTLP quiet 200ms, unmatched traces kept)"

echo "-- typescript client"
(
  cd clients/typescript
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  npm run --silent check-generated
  npm test
)

echo "-- python client"
(
  cd clients/python
  /usr/bin/python3 -m pytest -q -p no:cacheprovider tests
)
