#!/usr/bin/env bash
# The deployment of deploy/README.md, on 127.0.0.1, checked end to end: PostgreSQL, a Chroma
# server, `awai db upgrade`, then two `awai slack` processes in HTTP mode sharing both, with
# tests/backends/stack_check.py playing Slack and the load balancer in front of them. Exits 0
# when every check held; stops everything it started either way. CI runs it after `make test`.
#   deploy/local-stack.sh [PROCESSES]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
processes="${1:-2}"
venv="${VENV:-.venv}"
work="$(mktemp -d /tmp/awai-stack.XXXXXX)"
database="awai_stack_$$"
chroma_pid=""

cleanup() {
  [ -n "$chroma_pid" ] && kill "$chroma_pid" 2>/dev/null && wait "$chroma_pid" 2>/dev/null
  PGPASSWORD=awai "$psql" -h 127.0.0.1 -p "${AWAI_PG_PORT:-55432}" -U awai -d postgres -qc \
    "DROP DATABASE IF EXISTS \"$database\" WITH (FORCE)" 2>/dev/null || true
  rm -rf "$work"
}
psql="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql"
trap cleanup EXIT

# 1. PostgreSQL, and a database of this run's own.
eval "$(deploy/postgres-local.sh "$database")"
export AWAI_DATABASE_URL="$AWAI_TEST_POSTGRES_URL"

# 2. The Chroma server, on loopback only, with its data in a folder.
chroma_port="$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
MALLOC_PERTURB_=255 "$venv/bin/chroma" run --path "$work/chroma" --host 127.0.0.1 --port "$chroma_port" \
  > "$work/chroma.log" 2>&1 &
chroma_pid=$!
for _ in $(seq 1 150); do
  "$venv/bin/python" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$chroma_port/api/v2/heartbeat', timeout=1)" \
    2>/dev/null && break
  sleep 0.2
done
export AWAI_CHROMA_URL="http://127.0.0.1:$chroma_port/awai"

# 3. Migrate once, before any bot process starts.
export AWAI_DATA_DIR="$work/data"
"$venv/bin/awai" db upgrade

# 4. N bot processes behind a load balancer, and Slack itself: played by the check.
"$venv/bin/python" -m tests.backends.stack_check "$processes"
