<?php
// Local settings win when the file is there; the environment (with
// defaults) fills in the rest.
if ( file_exists( __DIR__ . '/local-config.php' ) ) {
	include __DIR__ . '/local-config.php';
} else {
	define( 'WP_LOCAL_DEV', false );
}
if ( is_readable( dirname( __DIR__ ) . '/no-such-dir/production-config.php' ) ) {
	require dirname( __DIR__ ) . '/no-such-dir/production-config.php';
}

defined( 'DB_NAME' ) || define( 'DB_NAME', getenv( 'LAYOUT_DB_NAME' ) ?: 'not-this-one' );
define( 'DB_USER', $_ENV['LAYOUT_DB_USER'] ?? 'root' );
define( 'DB_PASSWORD', $_SERVER['LAYOUT_DB_PASSWORD'] ?? '' );
define( 'DB_HOST', getenv( 'LAYOUT_DB_HOST' ) ?: '127.0.0.1' );

define( 'AUTH_KEY',         'guarded auth key' );
define( 'SECURE_AUTH_KEY',  'guarded secure auth key' );
define( 'LOGGED_IN_KEY',    'guarded logged in key' );
define( 'NONCE_KEY',        'guarded nonce key' );
define( 'AUTH_SALT',        'guarded auth salt' );
define( 'SECURE_AUTH_SALT', 'guarded secure auth salt' );
define( 'LOGGED_IN_SALT',   'guarded logged in salt' );
define( 'NONCE_SALT',       'guarded nonce salt' );

$table_prefix = getenv( 'LAYOUT_TABLE_PREFIX' ) ?: 'wp_';

require_once ABSPATH . 'wp-settings.php';
