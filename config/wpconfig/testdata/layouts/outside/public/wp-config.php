<?php
// Secrets kept outside the document root.
include_once( dirname( __FILE__ ) . '/../secrets/wp-secrets.php' );

$table_prefix = 'wp_';

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', dirname( __FILE__, 1 ) . '/' );
}
require_once( ABSPATH . 'wp-settings.php' );
