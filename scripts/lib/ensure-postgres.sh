# Installs and starts a local PostgreSQL from Debian's packages, with a role and database for
# the project. Source it; `ensure_postgres DB` prints the DATABASE_URL.
# shellcheck shell=bash

PG_USER=${PG_USER:-sandbox}
PG_PASSWORD=${PG_PASSWORD:-sandbox}
PG_PORT=${PG_PORT:-5432}

# Everything but the URL goes to stderr: callers capture stdout, and pg_ctlcluster prints
# notes such as "Removed stale pid file." there.
ensure_postgres() {
  start_postgres "$1" >&2 || return 1
  echo "postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$1"
}

start_postgres() {
  local db=$1
  apt_install postgresql
  local version
  version=$(ls /usr/lib/postgresql | sort -n | tail -1)
  if ! pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -q "^$version main$"; then
    as_root pg_createcluster "$version" main -p "$PG_PORT" >/dev/null
  fi
  if ! pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $4}' | grep -q online; then
    log "starting PostgreSQL $version"
    as_root pg_ctlcluster "$version" main start || die "PostgreSQL did not start"
  fi
  wait_for 30 as_root runuser -u postgres -- psql -p "$PG_PORT" -Atc 'SELECT 1' \
    || die "PostgreSQL is not answering"
  as_root runuser -u postgres -- psql -p "$PG_PORT" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  END IF;
END \$\$;
SQL
  if ! as_root runuser -u postgres -- psql -p "$PG_PORT" -Atc \
      "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
    as_root runuser -u postgres -- createdb -p "$PG_PORT" -O "$PG_USER" "$db"
  fi
}
