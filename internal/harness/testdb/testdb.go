// Package testdb gives each test a fresh MariaDB database holding
// WordPress's core tables. The server comes from WPSIDECAR_TEST_DSN
// (default root@tcp(127.0.0.1:3306)/); when none answers, tests fail, they
// do not skip. Under go test -short every entry point that would reach a
// server (ServerConfig, New, NewOn, StartServer…) skips the test instead,
// before dialling: the pure tests run with no server at all.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/cmd/namespaces"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
)

// DefaultDSN is used when WPSIDECAR_TEST_DSN is unset.
const DefaultDSN = "root@tcp(127.0.0.1:3306)/"

// Prefix is the table prefix of test databases.
const Prefix = "wp_"

//go:embed schema.sql
var schema string

// DB is one test's database.
type DB struct {
	Name string
	// SQL is a connection to the database as the server's admin, for
	// arranging and inspecting rows behind the store's back.
	SQL    *sql.DB
	config *mysql.Config
}

// SkipShort skips the test under go test -short: it needs a database
// server. The harness's entry points call it; a test that reaches a server
// some other way (a command it runs, a DSN of its own) calls it first.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs MariaDB; skipped under -short")
	}
}

// ServerConfig is the test server's connection settings.
func ServerConfig(t testing.TB) *mysql.Config {
	t.Helper()
	SkipShort(t)
	dsn := os.Getenv("WPSIDECAR_TEST_DSN")
	if dsn == "" {
		dsn = DefaultDSN
	}
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("testdb: WPSIDECAR_TEST_DSN %q: %v", dsn, err)
	}
	// Outage tests break connections on purpose; the driver need not say so.
	c.Logger = &mysql.NopLogger{}
	return c
}

// New creates a database with WordPress's core tables and the options a
// fresh install has that the sidecar reads (siteurl, home, pretty
// permalinks), and drops it when the test ends.
func New(t testing.TB) *DB {
	t.Helper()
	return NewOn(t, ServerConfig(t))
}

// NewOn is New on the server c names.
func NewOn(t testing.TB, c *mysql.Config) *DB {
	t.Helper()
	SkipShort(t)
	ac, err := mysql.NewConnector(c)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	admin := sql.OpenDB(ac)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		t.Fatalf("testdb: no MariaDB at %s (set WPSIDECAR_TEST_DSN): %v", c.Addr, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "wpsidecar_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci"); err != nil {
		t.Fatalf("testdb: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("testdb: drop %s: %v", name, err)
		}
	})

	dc := c.Clone()
	dc.DBName = name
	dc.MultiStatements = true
	// The session's sql_mode as wpdb sets it (set_sql_mode drops
	// NO_ZERO_DATE, ONLY_FULL_GROUP_BY, the strict and ANSI modes): the
	// tables' zero-date defaults are WordPress's own, which MySQL's
	// default mode refuses.
	if dc.Params == nil {
		dc.Params = map[string]string{}
	}
	dc.Params["sql_mode"] = "'NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"
	dconn, err := mysql.NewConnector(dc)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	conn := sql.OpenDB(dconn)
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, schema); err != nil {
		t.Fatalf("testdb: create WordPress tables: %v", err)
	}
	db := &DB{Name: name, SQL: conn, config: dc}
	for k, v := range map[string]string{
		"siteurl":             "http://example.test",
		"home":                "http://example.test",
		"blogname":            "Test site",
		"permalink_structure": "/%postname%/",
		"timezone_string":     "Europe/Berlin",
		"gmt_offset":          "",
	} {
		db.SetOption(t, k, v)
	}
	return db
}

// ServerConn is the connection to this database's server as its admin,
// no database named.
func (db *DB) ServerConn() *mysql.Config {
	c := db.config.Clone()
	c.DBName = ""
	return c
}

// StoreOptions are the options to open this database through the store.
func (db *DB) StoreOptions() store.Options {
	var tls store.TLS
	if db.config.TLS != nil {
		tls.Mode = store.TLSRequired // a server that takes only TLS
	}
	return store.Options{TLS: tls,
		Net: db.config.Net, Addr: db.config.Addr, User: db.config.User, Password: db.config.Passwd,
		DBName: db.Name, Charset: "utf8mb4", Collation: "utf8mb4_unicode_520_ci",
		TablePrefix: Prefix, MaxOpen: 8, Timeout: 5 * time.Second, Logger: zerolog.Nop(),
		HistoryUnits: HistoryUnits(),
	}
}

// HistoryUnits are the namespaces' history units, from the list cmd
// serves (package namespaces).
func HistoryUnits() []store.HistoryUnit {
	return module.HistoryUnits(namespaces.Modules(&config.Config{}, nil))
}

// Store opens the database through the store, closed when the test ends.
func (db *DB) Store(t testing.TB) *store.DB { t.Helper(); return db.StoreWith(t, nil) }

// StoreWith is Store with options changed by set (when not nil).
func (db *DB) StoreWith(t testing.TB, set func(*store.Options)) *store.DB {
	t.Helper()
	o := db.StoreOptions()
	if set != nil {
		set(&o)
	}
	s, err := store.Open(o)
	if err != nil {
		t.Fatalf("testdb: open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// KillConnections ends every connection of the server's user user (a
// feed's, say), as a server restart or a network cut would; some may
// have ended meanwhile.
func (db *DB) KillConnections(t testing.TB, user string) {
	t.Helper()
	rows, err := db.SQL.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?", user)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		db.SQL.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
	}
}

// SetOption writes an option row as WordPress's update_option would.
func (db *DB) SetOption(t testing.TB, name, value string) {
	t.Helper()
	_, err := db.SQL.Exec("INSERT INTO "+Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'yes') "+
		"ON DUPLICATE KEY UPDATE option_value = VALUES(option_value)", name, value)
	if err != nil {
		t.Fatalf("testdb: set option %s: %v", name, err)
	}
}

// DeleteOption removes an option row.
func (db *DB) DeleteOption(t testing.TB, name string) {
	t.Helper()
	if _, err := db.SQL.Exec("DELETE FROM "+Prefix+"options WHERE option_name = ?", name); err != nil {
		t.Fatalf("testdb: delete option %s: %v", name, err)
	}
}

// Tables lists the tables of the database.
func (db *DB) Tables(t testing.TB) []string {
	t.Helper()
	rows, err := db.SQL.Query("SHOW TABLES")
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		out = append(out, n)
	}
	return out
}

// AddSitemeta creates {base_prefix}sitemeta, the network options table of
// a multisite install.
func (db *DB) AddSitemeta(t testing.TB) {
	t.Helper()
	_, err := db.SQL.Exec("CREATE TABLE " + Prefix + "sitemeta (meta_id bigint(20) unsigned NOT NULL AUTO_INCREMENT, " +
		"site_id bigint(20) unsigned NOT NULL DEFAULT 0, meta_key varchar(255) DEFAULT NULL, meta_value longtext DEFAULT NULL, " +
		"PRIMARY KEY (meta_id), KEY meta_key (meta_key(191)), KEY site_id (site_id)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci")
	if err != nil {
		t.Fatalf("testdb: sitemeta: %v", err)
	}
}

// AddUser inserts a wp_users row and its meta rows (key, value), in order,
// and returns the user's ID.
func (db *DB) AddUser(t testing.TB, login, email, pass string, meta ...[2]string) int64 {
	t.Helper()
	res, err := db.SQL.Exec("INSERT INTO "+Prefix+"users (user_login, user_pass, user_nicename, user_email, user_registered, display_name) VALUES (?, ?, ?, ?, NOW(), ?)",
		login, pass, login, email, login)
	if err != nil {
		t.Fatalf("testdb: add user %s: %v", login, err)
	}
	id, _ := res.LastInsertId()
	for _, m := range meta {
		if _, err := db.SQL.Exec("INSERT INTO "+Prefix+"usermeta (user_id, meta_key, meta_value) VALUES (?, ?, ?)", id, m[0], m[1]); err != nil {
			t.Fatalf("testdb: add meta %s: %v", m[0], err)
		}
	}
	return id
}

// AddNetworkTables makes a multisite network's wp_site and wp_blogs as
// WordPress's schema does (wp_sitemeta: AddSitemeta).
func (db *DB) AddNetworkTables(t testing.TB) {
	t.Helper()
	for _, q := range []string{
		"CREATE TABLE " + Prefix + "site (id bigint(20) NOT NULL auto_increment, domain varchar(200) NOT NULL default '', path varchar(100) NOT NULL default '', PRIMARY KEY (id), KEY domain (domain(140),path(51)))",
		"CREATE TABLE " + Prefix + "blogs (blog_id bigint(20) NOT NULL auto_increment, site_id bigint(20) NOT NULL default '0', domain varchar(200) NOT NULL default '', path varchar(100) NOT NULL default '', " +
			"registered datetime NOT NULL default CURRENT_TIMESTAMP, last_updated datetime NOT NULL default CURRENT_TIMESTAMP, public tinyint(2) NOT NULL default '1', archived tinyint(2) NOT NULL default '0', " +
			"mature tinyint(2) NOT NULL default '0', spam tinyint(2) NOT NULL default '0', deleted tinyint(2) NOT NULL default '0', lang_id int(11) NOT NULL default '0', " +
			"PRIMARY KEY (blog_id), KEY domain (domain(50),path(5)), KEY lang_id (lang_id))",
	} {
		if _, err := db.SQL.Exec(q); err != nil {
			t.Fatalf("testdb: network tables: %v", err)
		}
	}
}

// AddSite makes site id's options table ({base}N_options, as
// wpmu_create_blog makes it) holding the options the sidecar reads, with
// home and siteurl set to home, pretty permalinks and the main site's roles.
func (db *DB) AddSite(t testing.TB, id int64, home string) {
	t.Helper()
	table := fmt.Sprintf("%s%d_options", Prefix, id)
	for _, q := range []string{
		"CREATE TABLE " + table + " LIKE " + Prefix + "options",
		"INSERT INTO " + table + " (option_name, option_value, autoload) SELECT REPLACE(option_name, '" + Prefix + "user_roles', '" +
			fmt.Sprintf("%s%d_user_roles", Prefix, id) + "'), option_value, autoload FROM " + Prefix + "options WHERE option_name IN ('" + Prefix + "user_roles', 'db_version')",
	} {
		if _, err := db.SQL.Exec(q); err != nil {
			t.Fatalf("testdb: site %d: %v", id, err)
		}
	}
	for name, value := range map[string]string{"siteurl": home, "home": home, "permalink_structure": "/%postname%/"} {
		if _, err := db.SQL.Exec("INSERT INTO "+table+" (option_name, option_value, autoload) VALUES (?, ?, 'yes') ON DUPLICATE KEY UPDATE option_value = VALUES(option_value)", name, value); err != nil {
			t.Fatalf("testdb: site %d option %s: %v", id, name, err)
		}
	}
}
