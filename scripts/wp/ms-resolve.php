<?php
// Asks WordPress which site of a network each requested domain and path
// is for, with its own ms_load_current_site_and_network, on a database
// whose wp_site and wp_blogs rows the caller made: the tests compare the
// sidecar's answer with this one. WordPress is loaded as a network with
// SHORTINIT (no options, plugins or themes needed), each case as a fresh
// request would see it.
//
//   php ms-resolve.php ABSPATH JSON
//
// JSON: {"db": {"name", "user", "password", "host"}, "subdomain": bool,
// "declared": {"domain", "path", "site_id", "blog_id"} (optional),
// "noblogredirect": "…" (optional), "boot": ["domain", "path"],
// "cases": [["domain", "path"], …]}. Prints, per case, {"result": "ok",
// "blog": ID} or {"result": "none"} or {"result": "<redirect URL>"}.

if ( $argc < 3 ) {
	fwrite( STDERR, "usage: php ms-resolve.php ABSPATH JSON\n" );
	exit( 2 );
}
$in = json_decode( $argv[2], true );

define( 'DB_NAME', $in['db']['name'] );
define( 'DB_USER', $in['db']['user'] );
define( 'DB_PASSWORD', $in['db']['password'] );
define( 'DB_HOST', $in['db']['host'] );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
$table_prefix = 'wp_';
define( 'MULTISITE', true );
define( 'SUBDOMAIN_INSTALL', (bool) $in['subdomain'] );
if ( isset( $in['declared'] ) ) {
	define( 'DOMAIN_CURRENT_SITE', $in['declared']['domain'] );
	define( 'PATH_CURRENT_SITE', $in['declared']['path'] );
	define( 'SITE_ID_CURRENT_SITE', $in['declared']['site_id'] );
	define( 'BLOG_ID_CURRENT_SITE', $in['declared']['blog_id'] );
}
if ( isset( $in['noblogredirect'] ) ) {
	define( 'NOBLOGREDIRECT', $in['noblogredirect'] );
}
define( 'SHORTINIT', true );
define( 'ABSPATH', rtrim( $argv[1], '/' ) . '/' );
$_SERVER['HTTP_HOST']   = $in['boot'][0];
$_SERVER['REQUEST_URI'] = $in['boot'][1];
require ABSPATH . 'wp-settings.php';

$out = array();
foreach ( $in['cases'] as $case ) {
	// Each request starts with nothing found and an empty cache.
	$GLOBALS['current_site'] = null;
	$GLOBALS['current_blog'] = null;
	wp_cache_flush();
	$r = ms_load_current_site_and_network( $case[0], $case[1], is_subdomain_install() );
	if ( true === $r ) {
		$out[] = array( 'result' => 'ok', 'blog' => (int) $GLOBALS['current_blog']->blog_id );
	} elseif ( false === $r ) {
		$out[] = array( 'result' => 'none' );
	} else {
		$out[] = array( 'result' => $r );
	}
}
echo json_encode( $out, JSON_UNESCAPED_SLASHES ), "\n";
