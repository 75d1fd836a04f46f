#!/bin/sh
# Creates Temporal's two PostgreSQL databases if missing and brings their schemas to the version the
# server needs; safe to run again. Run by docker-compose.yml (in temporalio/admin-tools) and by
# `durable-agent cluster start`, with server.env's settings and the database's address in the
# environment: POSTGRES_SEEDS, DB_PORT, POSTGRES_USER, POSTGRES_PWD. SCHEMA_DIR is where the
# server's schema files are (the admin-tools image has them at /etc/temporal/schema); SQL_TOOL the
# temporal-sql-tool to use.
set -eu
: "${SCHEMA_DIR:=/etc/temporal/schema}"
: "${SQL_TOOL:=temporal-sql-tool}"

# The password reaches the tool in its environment, never on a command line others can read.
SQL_PASSWORD=$POSTGRES_PWD
export SQL_PASSWORD
sql() {
  "$SQL_TOOL" --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

for pair in "$DBNAME:temporal" "$VISIBILITY_DBNAME:visibility"; do
  database=${pair%%:*}
  schema=${pair##*:}
  # Fails only because the database exists already (a real failure shows in the next step).
  sql --db "$database" create-database >/dev/null 2>&1 || true
  sql --db "$database" setup-schema -v 0.0
  sql --db "$database" update-schema -d "$SCHEMA_DIR/postgresql/v12/$schema/versioned"
done
