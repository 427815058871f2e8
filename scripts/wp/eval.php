<?php
// Runs PHP code inside a WordPress install and prints its return value as
// JSON: the tests' way to ask PHP what it sees (get_option) and to change
// the site through WordPress's own API (update_option, revoking application
// passwords, destroying sessions).
//
//   php eval.php DOCROOT 'return get_option("blogname");'

if ( $argc < 3 ) {
	fwrite( STDERR, "usage: php eval.php DOCROOT CODE\n" );
	exit( 2 );
}
$_SERVER['HTTP_HOST']   = getenv( 'WP_HTTP_HOST' ) ?: '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
require rtrim( $argv[1], '/' ) . '/wp-load.php';
$result = eval( $argv[2] );
echo json_encode( $result, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION ), "\n";
