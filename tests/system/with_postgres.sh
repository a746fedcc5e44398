#!/usr/bin/env bash
# Runs a command beside a PostgreSQL server of its own: a fresh cluster in a temporary folder,
# listening on a free loopback port, trusted, gone afterwards. The command finds it in
# RECOMPDIAG_TEST_POSTGRES_URL (postgresql://recompdiag@127.0.0.1:PORT/postgres). As root the
# server runs as Debian's `postgres` user (initdb refuses root).
# Usage: tests/system/with_postgres.sh COMMAND [ARG...]
set -euo pipefail
source "$(dirname "$0")/free_port.sh"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [[ -z $pgbin || ! -x $pgbin/initdb ]]; then
  echo "with_postgres: no PostgreSQL server here (scripts/setup --all installs Debian's postgresql)" >&2
  exit 1
fi
dir=$(mktemp -d /tmp/recompdiag-pg-XXXXXX)
as=()
if [[ $(id -u) -eq 0 ]]; then
  chown postgres "$dir"
  as=(runuser -u postgres --)
fi
chmod 755 "$dir"
port=$(free_port)
stop() {
  "${as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT
"${as[@]}" "$pgbin/initdb" -D "$dir/data" -A trust -U recompdiag >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
"${as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null ||
  { cat "$dir/server.log" >&2; exit 1; }
export RECOMPDIAG_TEST_POSTGRES_URL=postgresql://recompdiag@127.0.0.1:$port/postgres
"$@"
