# The sidecar's change feed's own database user, made on the database's
# first start: the official mariadb image's entrypoint sources every *.sh
# in /docker-entrypoint-initdb.d (docker-compose.yml mounts this file
# there), with its helpers defined. The user may follow the binary log
# (REPLICATION SLAVE) and ask where it ends (BINLOG MONITOR), nothing more:
# the grants docs/caching.md lists. Its password is WPSIDECAR_FEED_PASSWORD,
# which the sidecar's WPSIDECAR_BINLOG_DSN names too. A database that
# already exists never runs this: docs/deploy/compose.md says what to run.
# shellcheck shell=bash
if [ -z "${WPSIDECAR_FEED_PASSWORD:-}" ]; then
	mysql_error "wpsidecar: WPSIDECAR_FEED_PASSWORD is empty: the change feed's user needs a password"
fi
docker_process_sql <<EOSQL
CREATE USER IF NOT EXISTS 'wpsidecar_feed'@'%' IDENTIFIED BY '$(docker_sql_escape_string_literal "$WPSIDECAR_FEED_PASSWORD")';
GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'wpsidecar_feed'@'%';
EOSQL
mysql_note "wpsidecar: made the change feed's user wpsidecar_feed (REPLICATION SLAVE, BINLOG MONITOR)"
