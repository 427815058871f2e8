<?php
define( 'DB_NAME', 'wpsidecar_layouts' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '127.0.0.1:3306' );
define( 'AUTH_KEY',         'network auth key' );
define( 'SECURE_AUTH_KEY',  'network secure auth key' );
define( 'LOGGED_IN_KEY',    'network logged in key' );
define( 'NONCE_KEY',        'network nonce key' );
define( 'AUTH_SALT',        'network auth salt' );
define( 'SECURE_AUTH_SALT', 'network secure auth salt' );
define( 'LOGGED_IN_SALT',   'network logged in salt' );
define( 'NONCE_SALT',       'network nonce salt' );
$table_prefix = 'wp_';
define( 'WP_ENVIRONMENT_TYPE', 'local' );

// The network's settings, as wp-admin's Network Setup gives them, kept in
// a file of their own.
require __DIR__ . '/wp-config-network.php';

require_once ABSPATH . 'wp-settings.php';
