<?php
// Turns the installed WordPress into a multisite network, with WordPress's
// own functions (there is no wp-cli), in two steps:
//
//   php network.php DOCROOT install subdomain|subdirectory DOMAIN
//       before wp-config.php defines MULTISITE: the network tables, the
//       network (populate_network) and the main site's URLs; prints the
//       constants to add to wp-config.php.
//   php network.php DOCROOT sites DOMAIN
//       on the network: sites 2 and 3 (two.DOMAIN / three.DOMAIN, or
//       DOMAIN/two/ and DOMAIN/three/), users in some sites and not others,
//       an application password for each; prints them as JSON. With
//       WP_NETWORK_SITES=N, sites 4 … N as well (siteK.DOMAIN or
//       DOMAIN/siteK/), for benchmarks.
//
// Users: admin (the installer's user, a super admin, as is e2e_denied,
// made one by populate_network); e2e_administrator
// (site 1's administrator, made one of site 2's too); e2e_site3admin
// (administrator of site 3 only); e2e_subscriber (site 1 only).

if ( $argc < 4 ) {
	fwrite( STDERR, "usage: php network.php DOCROOT install MODE DOMAIN | sites DOMAIN\n" );
	exit( 2 );
}
$docroot = rtrim( $argv[1], '/' );
$step    = $argv[2];
$domain  = 'install' === $step ? $argv[4] : $argv[3];

$_SERVER['HTTP_HOST']   = $domain;
$_SERVER['SERVER_NAME'] = $domain;
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REMOTE_ADDR'] = '127.0.0.1'; // wpmu_create_blog logs it

if ( 'install' === $step ) {
	$subdomain = 'subdomain' === $argv[3];
	define( 'WP_INSTALLING_NETWORK', true );
	require $docroot . '/wp-load.php';
	require_once ABSPATH . 'wp-admin/includes/upgrade.php';
	foreach ( $wpdb->tables( 'ms_global' ) as $table => $prefixed ) {
		$wpdb->$table = $prefixed;
	}
	install_network();
	$admin  = get_user_by( 'login', getenv( 'WP_ADMIN_USER' ) ?: 'admin' );
	$result = populate_network( 1, $domain, $admin->user_email, 'wpsidecar network', '/', $subdomain );
	// A subdomain install checks wildcard DNS last, which loopback has not.
	if ( is_wp_error( $result ) && 'no_wildcard_dns' !== $result->get_error_code() ) {
		fwrite( STDERR, $result->get_error_message() . "\n" );
		exit( 1 );
	}
	update_option( 'siteurl', 'http://' . $domain );
	update_option( 'home', 'http://' . $domain );
	// Pretty permalinks without populate_network's /blog/ base.
	$wp_rewrite->set_permalink_structure( '/%postname%/' );
	printf(
		"define( 'MULTISITE', true );\ndefine( 'SUBDOMAIN_INSTALL', %s );\ndefine( 'DOMAIN_CURRENT_SITE', '%s' );\n" .
		"define( 'PATH_CURRENT_SITE', '/' );\ndefine( 'SITE_ID_CURRENT_SITE', 1 );\ndefine( 'BLOG_ID_CURRENT_SITE', 1 );\n",
		$subdomain ? 'true' : 'false',
		$domain
	);
	exit( 0 );
}

require $docroot . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/user.php';
if ( ! is_multisite() ) {
	fwrite( STDERR, "network.php sites: wp-config.php does not define MULTISITE\n" );
	exit( 1 );
}
$admin = get_user_by( 'login', getenv( 'WP_ADMIN_USER' ) ?: 'admin' );
$sites = array();
$names = array( 2 => 'two', 3 => 'three' );
for ( $k = 4; $k <= (int) getenv( 'WP_NETWORK_SITES' ); $k++ ) {
	$names[ $k ] = 'site' . $k;
}
foreach ( $names as $id => $name ) {
	list( $d, $p ) = is_subdomain_install() ? array( $name . '.' . $domain, '/' ) : array( $domain, '/' . $name . '/' );
	$blog = get_blog_id_from_url( $d, $p );
	if ( ! $blog ) {
		$blog = wpmu_create_blog( $d, $p, 'Site ' . $name, $admin->ID );
		if ( is_wp_error( $blog ) ) {
			fwrite( STDERR, $blog->get_error_message() . "\n" );
			exit( 1 );
		}
	}
	switch_to_blog( $blog );
	global $wp_rewrite;
	$wp_rewrite->set_permalink_structure( '/%postname%/' );
	restore_current_blog();
	if ( $id <= 3 ) {
		$sites[ $name ] = array( 'id' => $blog, 'domain' => $d, 'path' => $p );
	}
}

// populate_network made every administrator of the single site a super
// admin; e2e_administrator is to be one of sites 1 and 2 only.
revoke_super_admin( get_user_by( 'login', 'e2e_administrator' )->ID );

$site3admin = get_user_by( 'login', 'e2e_site3admin' );
if ( ! $site3admin ) {
	$id = wpmu_create_user( 'e2e_site3admin', 'pw-site3admin-e2e', 'e2e_site3admin@example.test' );
	$site3admin = get_user_by( 'id', $id );
}
add_user_to_blog( $sites['three']['id'], $site3admin->ID, 'administrator' );
add_user_to_blog( $sites['two']['id'], get_user_by( 'login', 'e2e_administrator' )->ID, 'administrator' );

$users = array();
foreach ( array( 'super' => $admin, 'site12admin' => get_user_by( 'login', 'e2e_administrator' ), 'site3admin' => $site3admin, 'subscriber' => get_user_by( 'login', 'e2e_subscriber' ) ) as $name => $user ) {
	foreach ( WP_Application_Passwords::get_user_application_passwords( $user->ID ) as $item ) {
		if ( 'wpsidecar-network' === $item['name'] ) {
			WP_Application_Passwords::delete_application_password( $user->ID, $item['uuid'] );
		}
	}
	$created = WP_Application_Passwords::create_new_application_password( $user->ID, array( 'name' => 'wpsidecar-network' ) );
	if ( is_wp_error( $created ) ) {
		fwrite( STDERR, $user->user_login . ': ' . $created->get_error_message() . "\n" );
		exit( 1 );
	}
	$users[ $name ] = array( 'id' => $user->ID, 'login' => $user->user_login, 'application_password' => $created[0] );
}
$users['super']['password']       = getenv( 'WP_ADMIN_PASSWORD' ) ?: 'admin-password';
$users['site12admin']['password'] = 'pw-administrator-e2e';
$users['site3admin']['password']  = 'pw-site3admin-e2e';
$users['subscriber']['password']  = 'pw-subscriber-e2e';
echo wp_json_encode( array( 'sites' => $sites, 'users' => $users ) );
