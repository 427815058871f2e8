<?php
/**
 * A flat configuration: everything in one file, as WordPress's installer
 * writes it.
 */
define( 'DB_NAME', 'wpsidecar_layouts' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '127.0.0.1:3306' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );

define( 'AUTH_KEY',         'flat auth key' );
define( 'SECURE_AUTH_KEY',  'flat secure auth key' );
define( 'LOGGED_IN_KEY',    'flat logged in key' );
define( 'NONCE_KEY',        'flat nonce key' );
define( 'AUTH_SALT',        'flat auth salt' );
define( 'SECURE_AUTH_SALT', 'flat secure auth salt' );
define( 'LOGGED_IN_SALT',   'flat logged in salt' );
define( 'NONCE_SALT',       'flat nonce salt' );

$table_prefix = 'wp_';

define( 'WP_DEBUG', false );
define( 'WP_ENVIRONMENT_TYPE', 'local' );

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}

require_once ABSPATH . 'wp-settings.php';
