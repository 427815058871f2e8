<?php
/**
 * Plugin Name: wpsidecar companion test switches
 * Description: For the end-to-end tests only: filters that a site or a plugin would add, switched by options, and a record of the failed-login actions WordPress fires.
 */

defined( 'ABSPATH' ) || exit;

if ( get_option( 'wpsidecar_test_app_passwords_off' ) ) {
	add_filter( 'wp_is_application_passwords_available', '__return_false' );
}

$wpsidecar_test_off_for = (string) get_option( 'wpsidecar_test_app_passwords_off_for', '' );
if ( '' !== $wpsidecar_test_off_for ) {
	add_filter(
		'wp_is_application_passwords_available_for_user',
		function ( $available, $user ) use ( $wpsidecar_test_off_for ) {
			return $user->user_login === $wpsidecar_test_off_for ? false : $available;
		},
		10,
		2
	);
}

if ( get_option( 'wpsidecar_test_rest_closed' ) ) {
	add_filter(
		'rest_authentication_errors',
		function ( $result ) {
			if ( ! empty( $result ) || is_user_logged_in() ) {
				return $result;
			}
			return new WP_Error( 'rest_not_logged_in', 'You are not currently logged in.', array( 'status' => 401 ) );
		}
	);
}

function wpsidecar_test_record( $action, $login, $error ) {
	$seen   = get_option( 'wpsidecar_test_failures', array() );
	$seen[] = array(
		'action' => $action,
		'login'  => $login,
		'ip'     => isset( $_SERVER['REMOTE_ADDR'] ) ? $_SERVER['REMOTE_ADDR'] : '',
		'code'   => is_wp_error( $error ) ? $error->get_error_code() : '',
	);
	update_option( 'wpsidecar_test_failures', $seen, false );
}
add_action(
	'wp_login_failed',
	function ( $login, $error = null ) {
		wpsidecar_test_record( 'wp_login_failed', $login, $error );
	},
	10,
	2
);
add_action(
	'application_password_failed_authentication',
	function ( $error ) {
		wpsidecar_test_record( 'application_password_failed_authentication', '', $error );
	}
);
