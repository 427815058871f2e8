<?php
// Creates the test users through WordPress's own API, once, and gives each
// an application password; prints them as JSON. Users already there keep
// their password; their application password named "wpsidecar" is replaced.
//
//   php users.php DOCROOT > users.json
//
// administrator, editor, author, subscriber: one of each role;
// granted:  a subscriber granted manage_options and edit_theme_options directly;
// denied:   an administrator denied manage_options and edit_theme_options directly.

if ( $argc < 2 ) {
	fwrite( STDERR, "usage: php users.php DOCROOT\n" );
	exit( 2 );
}
$_SERVER['HTTP_HOST']   = getenv( 'WP_HTTP_HOST' ) ?: '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
require rtrim( $argv[1], '/' ) . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/user.php';

$specs = array(
	'administrator' => array( 'role' => 'administrator' ),
	'editor'        => array( 'role' => 'editor' ),
	'author'        => array( 'role' => 'author' ),
	'subscriber'    => array( 'role' => 'subscriber' ),
	'granted'       => array( 'role' => 'subscriber', 'caps' => array( 'manage_options' => true, 'edit_theme_options' => true ) ),
	'denied'        => array( 'role' => 'administrator', 'caps' => array( 'manage_options' => false, 'edit_theme_options' => false ) ),
);

$out = array();
foreach ( $specs as $name => $spec ) {
	$login    = 'e2e_' . $name;
	$password = 'pw-' . $name . '-e2e';
	$user     = get_user_by( 'login', $login );
	if ( ! $user ) {
		$id = wp_insert_user( array(
			'user_login' => $login,
			'user_pass'  => $password,
			'user_email' => $login . '@example.test',
			'role'       => $spec['role'],
		) );
		if ( is_wp_error( $id ) ) {
			fwrite( STDERR, $login . ': ' . $id->get_error_message() . "\n" );
			exit( 1 );
		}
		$user = get_user_by( 'id', $id );
		foreach ( isset( $spec['caps'] ) ? $spec['caps'] : array() as $cap => $grant ) {
			$user->add_cap( $cap, $grant );
		}
	}
	foreach ( WP_Application_Passwords::get_user_application_passwords( $user->ID ) as $item ) {
		if ( 'wpsidecar' === $item['name'] ) {
			WP_Application_Passwords::delete_application_password( $user->ID, $item['uuid'] );
		}
	}
	$created = WP_Application_Passwords::create_new_application_password( $user->ID, array( 'name' => 'wpsidecar' ) );
	if ( is_wp_error( $created ) ) {
		fwrite( STDERR, $login . ': ' . $created->get_error_message() . "\n" );
		exit( 1 );
	}
	$out[ $name ] = array(
		'id'                    => $user->ID,
		'login'                 => $login,
		'email'                 => $user->user_email,
		'password'              => $password,
		'application_password'  => WP_Application_Passwords::chunk_password( $created[0] ),
		'application_uuid'      => $created[1]['uuid'],
	);
}
echo json_encode( $out, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES ), "\n";
