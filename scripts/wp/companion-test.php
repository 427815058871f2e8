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

// The history screen's test: every notice and deprecation is logged (WP_DEBUG
// is off, which logs warnings and errors only) while the companion adds its
// menu item and from the history page's load on: not in WordPress's update
// checks between them (admin_init), which log notices offline. And the
// plugin's strings are "translated" to "xx-…", to follow them into the
// script.
if ( get_option( 'wpsidecar_test_all_errors' ) ) {
	$wpsidecar_test_level = error_reporting(); // phpcs:ignore WordPress.PHP.DevelopmentFunctions, WordPress.PHP.DiscouragedPHPFunctions
	$wpsidecar_test_all   = function () {
		error_reporting( E_ALL ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions, WordPress.PHP.DiscouragedPHPFunctions
	};
	add_action( 'admin_menu', $wpsidecar_test_all, 9 ); // the companion's item: 10
	add_action(
		'admin_menu',
		function () use ( $wpsidecar_test_level ) {
			error_reporting( $wpsidecar_test_level ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions, WordPress.PHP.DiscouragedPHPFunctions
		},
		11
	);
	add_action( 'load-tools_page_wpsidecar-history', $wpsidecar_test_all, 0 );
}
if ( get_option( 'wpsidecar_test_translate' ) ) {
	add_filter(
		'gettext',
		function ( $translation, $text, $domain ) {
			return 'wpsidecar' === $domain ? 'xx-' . $text : $translation;
		},
		10,
		3
	);
}
