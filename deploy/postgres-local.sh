#!/usr/bin/env bash
# A PostgreSQL for AWAI on 127.0.0.1 only, from Debian's packages: for the tests, CI and
# deploy/local-stack.sh. Idempotent: installs the package only when it is missing, creates the
# cluster only once, starts it only when it is not running. Prints the connection URL as a shell
# line to eval:   eval "$(deploy/postgres-local.sh [DATABASE])"   (DATABASE: default awai)
#   AWAI_PG_DIR   cluster folder   (default /tmp/awai-postgres)
#   AWAI_PG_PORT  port             (default 55432)
# (-c fsync=off: a test cluster trades crash safety for speed; never copy that to a deployment.)
# The cluster uses the C locale (text sorts by code point, as SQLite sorts it) and password
# authentication for the role awai (password awai). It is a local test database, not a deployment:
# deploy/README.md says what a real one needs.
set -euo pipefail

dir="${AWAI_PG_DIR:-/tmp/awai-postgres}"
port="${AWAI_PG_PORT:-55432}"
database="${1:-awai}"
url="postgresql+psycopg://awai:awai@127.0.0.1:${port}/${database}"

log() { echo "postgres-local: $*" >&2; }

bin_dir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

if [ -z "$(bin_dir)" ] || [ ! -x "$(bin_dir)/initdb" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "PostgreSQL is not installed; run as root, or: sudo apt-get install -y postgresql"
    exit 1
  fi
  log "installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # policy-rc.d 101: the package's own cluster is not started; ours runs on its own port.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq postgresql >&2
  rm -f /usr/sbin/policy-rc.d
fi
bin="$(bin_dir)"

# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

if [ ! -f "$dir/PG_VERSION" ]; then
  log "creating a cluster in $dir"
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
  pwfile="$(mktemp)"
  echo awai > "$pwfile"
  chmod 644 "$pwfile"
  as_owner "$bin/initdb" -D "$dir" -U awai --pwfile="$pwfile" --auth=scram-sha-256 \
    --locale=C --encoding=UTF8 >&2
  rm -f "$pwfile"
fi

if ! as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
  log "starting on 127.0.0.1:$port"
  as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=off" start >&2
fi

export PGPASSWORD=awai
if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U awai -d postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1; then
  "$bin/psql" -h 127.0.0.1 -p "$port" -U awai -d postgres -qc "CREATE DATABASE \"$database\"" >&2
fi
echo "export AWAI_TEST_POSTGRES_URL='$url'"
