<?php
// Database settings and keys live in files of their own, as managed hosts
// and deployment tools keep them.
require_once __DIR__ . '/wp-config-db.php';
require_once 'wp-config-keys.php';

$table_prefix = 'wp_';
define( 'WP_ENVIRONMENT_TYPE', 'local' );

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', dirname( __FILE__ ) . '/' );
}
require_once ABSPATH . 'wp-settings.php';
