<?php
// Installs WordPress into the database its wp-config.php names, through
// WordPress's own installer functions (there is no wp-cli), and makes it look
// like a real site: pretty permalinks, a non-UTC time zone, a few posts.
// Running it again changes nothing that is already in place.
//
//   WP_SITEURL=… WP_ADMIN_USER=… WP_ADMIN_PASSWORD=… php install.php DOCROOT

if ( $argc < 2 ) {
	fwrite( STDERR, "usage: php install.php DOCROOT\n" );
	exit( 2 );
}
$docroot  = rtrim( $argv[1], '/' );
$siteurl  = getenv( 'WP_SITEURL' ) ?: 'http://127.0.0.1:8080';
$user     = getenv( 'WP_ADMIN_USER' ) ?: 'admin';
$password = getenv( 'WP_ADMIN_PASSWORD' ) ?: 'admin-password';
$email    = getenv( 'WP_ADMIN_EMAIL' ) ?: 'admin@example.test';

$parts                  = parse_url( $siteurl );
$_SERVER['HTTP_HOST']   = $parts['host'] . ( isset( $parts['port'] ) ? ':' . $parts['port'] : '' );
$_SERVER['SERVER_NAME'] = $parts['host'];
$_SERVER['REQUEST_URI'] = '/';
define( 'WP_INSTALLING', true );

require $docroot . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

if ( ! is_blog_installed() ) {
	wp_install( 'wpsidecar demo', $user, $email, true, '', wp_slash( $password ) );
	echo "installed WordPress\n";
}

update_option( 'siteurl', $siteurl );
update_option( 'home', $siteurl );
update_option( 'timezone_string', 'Europe/Berlin' );
update_option( 'gmt_offset', '' );
if ( get_option( 'permalink_structure' ) !== '/%postname%/' ) {
	global $wp_rewrite;
	$wp_rewrite->set_permalink_structure( '/%postname%/' );
	$wp_rewrite->flush_rules( false );
}
if ( get_option( 'template' ) !== 'twentytwentyone' && wp_get_theme( 'twentytwentyone' )->exists() ) {
	switch_theme( 'twentytwentyone' );
}

$posts = get_posts( array( 'numberposts' => -1, 'post_status' => 'publish', 'fields' => 'ids' ) );
for ( $i = count( $posts ); $i < 10; $i++ ) {
	wp_insert_post( array(
		'post_title'   => sprintf( 'Demo post %d', $i + 1 ),
		'post_content' => str_repeat( "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n", 8 ),
		'post_status'  => 'publish',
		'post_author'  => 1,
	) );
}
echo "ready: ", home_url( '/' ), "\n";
