<?php
// Prints an application password of LOGIN named NAME, through WordPress's
// own API. With STATE_FILE, the password made by an earlier run is printed
// again while WordPress still has it; otherwise a new one is made and kept
// there.
//
//   php app-password.php DOCROOT LOGIN NAME [STATE_FILE]

if ( $argc < 4 ) {
	fwrite( STDERR, "usage: php app-password.php DOCROOT LOGIN NAME [STATE_FILE]\n" );
	exit( 2 );
}
list( , $docroot, $login, $name ) = $argv;
$state = isset( $argv[4] ) ? $argv[4] : '';

$_SERVER['HTTP_HOST']   = getenv( 'WP_HTTP_HOST' ) ?: '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
require rtrim( $docroot, '/' ) . '/wp-load.php';

$user = get_user_by( 'login', $login );
if ( ! $user ) {
	fwrite( STDERR, "no user $login\n" );
	exit( 1 );
}
if ( $state && is_readable( $state ) ) {
	$saved = json_decode( file_get_contents( $state ), true );
	if ( is_array( $saved ) && WP_Application_Passwords::get_user_application_password( $user->ID, $saved['uuid'] ) ) {
		echo $saved['password'], "\n";
		exit( 0 );
	}
}
// An item of this name without its password in STATE_FILE is lost to us:
// replace it (WordPress 6.1 refuses a second item of the same name).
foreach ( WP_Application_Passwords::get_user_application_passwords( $user->ID ) as $item ) {
	if ( $name === $item['name'] ) {
		WP_Application_Passwords::delete_application_password( $user->ID, $item['uuid'] );
	}
}
$created = WP_Application_Passwords::create_new_application_password( $user->ID, array( 'name' => $name ) );
if ( is_wp_error( $created ) ) {
	fwrite( STDERR, $created->get_error_message() . "\n" );
	exit( 1 );
}
$password = WP_Application_Passwords::chunk_password( $created[0] );
if ( $state ) {
	file_put_contents( $state, json_encode( array( 'uuid' => $created[1]['uuid'], 'password' => $password ) ) );
}
echo $password, "\n";
