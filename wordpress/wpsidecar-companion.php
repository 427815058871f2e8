<?php
/**
 * Plugin Name: wpsidecar companion
 * Description: Tells wpsidecar what PHP decides about authentication (application passwords available, per user; REST closed to anonymous users), and fires WordPress's failed-login actions for attempts the sidecar refused, so that lockout plugins see them. Optional: the sidecar works without it.
 * Version: 1.0.0
 * License: MIT
 *
 * Install as a must-use plugin: copy this file into wp-content/mu-plugins/.
 * For failure reports, define the same secret for PHP and the sidecar in
 * wp-config.php (the sidecar reads it from there too):
 *
 *   define( 'WPSIDECAR_COMPANION_SECRET', '…a long random string…' );
 *
 * What it publishes, in the option wpsidecar_companion (not autoloaded),
 * refreshed at most every WPSIDECAR_COMPANION_INTERVAL seconds (default 60)
 * on any PHP request, and at the end of a request that activated or
 * deactivated a plugin, switched themes or changed a user:
 *
 *   {"version":1,"updated":1795372800,
 *    "application_passwords_available":true,
 *    "application_passwords_unavailable_for":[12,40],
 *    "anonymous_rest_error":null}
 */

defined( 'ABSPATH' ) || exit;

const WPSIDECAR_COMPANION_OPTION = 'wpsidecar_companion';

/**
 * The decisions the sidecar can obey, as PHP computes them now. Filters are
 * asked with `true` as the default so that only what a plugin or the site
 * turned off is recorded: HTTPS and the environment type are the sidecar's
 * own checks.
 */
function wpsidecar_companion_policy() {
	$policy = array(
		'version'                              => 1,
		'updated'                              => time(),
		'application_passwords_available'      => (bool) apply_filters( 'wp_is_application_passwords_available', true ),
		'application_passwords_unavailable_for' => array(),
		'anonymous_rest_error'                 => null,
	);

	// Only users who hold application passwords can use them; at most the
	// first 5,000 are asked about (a filter per user is PHP's cost).
	$ids = get_users(
		array(
			'meta_key' => '_application_passwords',
			'fields'   => 'ID',
			'number'   => 5000,
			'orderby'  => 'ID',
		)
	);
	foreach ( $ids as $id ) {
		$user = get_userdata( $id );
		if ( $user && ! apply_filters( 'wp_is_application_passwords_available_for_user', true, $user ) ) {
			$policy['application_passwords_unavailable_for'][] = (int) $id;
		}
	}

	// What the REST API answers an anonymous request, before any route: a
	// site closed to visitors (plugins filter rest_authentication_errors).
	// Core's own cookie and application-password checks judge this
	// request's credentials, not an anonymous visitor's: they stay out.
	$core = array(
		'rest_cookie_check_errors'              => 100,
		'rest_application_password_check_errors' => 90,
	);
	foreach ( $core as $fn => $prio ) {
		$core[ $fn ] = remove_filter( 'rest_authentication_errors', $fn, $prio ) ? $prio : false;
	}
	$current = get_current_user_id();
	wp_set_current_user( 0 );
	$result = apply_filters( 'rest_authentication_errors', null );
	wp_set_current_user( $current );
	foreach ( $core as $fn => $prio ) {
		if ( false !== $prio ) {
			add_filter( 'rest_authentication_errors', $fn, $prio );
		}
	}
	if ( is_wp_error( $result ) ) {
		$data   = $result->get_error_data();
		$status = is_array( $data ) && isset( $data['status'] ) ? (int) $data['status'] : 401;
		$policy['anonymous_rest_error'] = array(
			'code'    => $result->get_error_code(),
			'message' => $result->get_error_message(),
			'status'  => $status,
		);
	}
	return $policy;
}

/**
 * Writes the policy when it differs from what is stored (the timestamp
 * aside), and notes the time of the check.
 */
function wpsidecar_companion_publish() {
	$policy = wpsidecar_companion_policy();
	$stored = json_decode( (string) get_option( WPSIDECAR_COMPANION_OPTION, '' ), true );
	if ( is_array( $stored ) ) {
		$stored['updated'] = $policy['updated'];
	}
	if ( $stored !== $policy ) {
		update_option( WPSIDECAR_COMPANION_OPTION, wp_json_encode( $policy ), false );
	}
	if ( wpsidecar_companion_interval() > 0 ) {
		set_transient( 'wpsidecar_companion_checked', time(), wpsidecar_companion_interval() );
	}
	return $policy;
}

function wpsidecar_companion_interval() {
	return defined( 'WPSIDECAR_COMPANION_INTERVAL' ) ? max( 0, (int) WPSIDECAR_COMPANION_INTERVAL ) : 60;
}

// Late on every request, once plugins have added their filters.
add_action(
	'wp_loaded',
	function () {
		if ( 0 === wpsidecar_companion_interval() || false === get_transient( 'wpsidecar_companion_checked' ) ) {
			wpsidecar_companion_publish();
		}
	},
	PHP_INT_MAX
);

// Changes that can move a decision are published at the end of the request.
foreach ( array( 'activated_plugin', 'deactivated_plugin', 'switch_theme', 'profile_update', 'set_user_role', 'user_register' ) as $wpsidecar_hook ) {
	add_action(
		$wpsidecar_hook,
		function () {
			if ( ! has_action( 'shutdown', 'wpsidecar_companion_publish' ) ) {
				add_action( 'shutdown', 'wpsidecar_companion_publish' );
			}
		}
	);
}
unset( $wpsidecar_hook );

/**
 * The secret shared with the sidecar, or '' when none is defined.
 */
function wpsidecar_companion_secret() {
	if ( defined( 'WPSIDECAR_COMPANION_SECRET' ) ) {
		return (string) WPSIDECAR_COMPANION_SECRET;
	}
	return (string) getenv( 'WPSIDECAR_COMPANION_SECRET' );
}

/**
 * Whether a report is the sidecar's: HMAC-SHA256 of "timestamp.body" with
 * the shared secret, made within the last five minutes.
 */
function wpsidecar_companion_verify( WP_REST_Request $request ) {
	return wpsidecar_companion_signed( (string) $request->get_header( 'x_wpsidecar_timestamp' ), (string) $request->get_header( 'x_wpsidecar_signature' ), $request->get_body() );
}

function wpsidecar_companion_signed( $ts, $sig, $body ) {
	$secret = wpsidecar_companion_secret();
	if ( '' === $secret || ! ctype_digit( $ts ) || abs( time() - (int) $ts ) > 300 ) {
		return false;
	}
	return hash_equals( 'sha256=' . hash_hmac( 'sha256', $ts . '.' . $body, $secret ), $sig );
}

// A site closed to anonymous REST requests must still take the sidecar's
// signed reports: they carry no WordPress credentials.
add_filter(
	'rest_authentication_errors',
	function ( $result ) {
		$route = isset( $GLOBALS['wp']->query_vars['rest_route'] ) ? untrailingslashit( $GLOBALS['wp']->query_vars['rest_route'] ) : '';
		if ( '/wpsidecar-companion/v1/failed-auth' !== $route || ! isset( $_SERVER['HTTP_X_WPSIDECAR_TIMESTAMP'], $_SERVER['HTTP_X_WPSIDECAR_SIGNATURE'] ) ) {
			return $result;
		}
		$signed = wpsidecar_companion_signed( (string) $_SERVER['HTTP_X_WPSIDECAR_TIMESTAMP'], (string) $_SERVER['HTTP_X_WPSIDECAR_SIGNATURE'], (string) file_get_contents( 'php://input' ) );
		return $signed ? true : $result;
	},
	PHP_INT_MAX
);

/**
 * POST ?rest_route=/wpsidecar-companion/v1/failed-auth, from the sidecar:
 * {"login":"…","ip":"…","kind":"application_password"|"password","code":"…","message":"…"}.
 * Fires what WordPress fires for the same failure, with REMOTE_ADDR set to
 * the client's address so that lockout plugins count the right client.
 */
function wpsidecar_companion_failed_auth( WP_REST_Request $request ) {
	$body  = json_decode( $request->get_body(), true );
	$login = is_array( $body ) && isset( $body['login'] ) ? (string) $body['login'] : '';
	$ip    = is_array( $body ) && isset( $body['ip'] ) ? (string) filter_var( $body['ip'], FILTER_VALIDATE_IP ) : '';
	$kind  = is_array( $body ) && isset( $body['kind'] ) ? (string) $body['kind'] : '';
	$code  = is_array( $body ) && isset( $body['code'] ) ? sanitize_key( $body['code'] ) : 'incorrect_password';
	$msg   = is_array( $body ) && isset( $body['message'] ) ? (string) $body['message'] : '';
	if ( '' === $login || '' === $ip || ! in_array( $kind, array( 'application_password', 'password' ), true ) ) {
		return new WP_Error( 'wpsidecar_companion_bad_report', 'login, ip and kind (application_password or password) are required.', array( 'status' => 400 ) );
	}
	$_SERVER['REMOTE_ADDR'] = $ip;
	$error                  = new WP_Error( $code, $msg );
	if ( 'application_password' === $kind ) {
		// wp_authenticate_application_password() fires this one alone.
		do_action( 'application_password_failed_authentication', $error );
	} else {
		// wp_authenticate() does, for a wrong account password.
		do_action( 'wp_login_failed', $login, $error );
	}
	return new WP_REST_Response( array( 'fired' => $kind ), 200 );
}

add_action(
	'rest_api_init',
	function () {
		if ( '' === wpsidecar_companion_secret() ) {
			return;
		}
		register_rest_route(
			'wpsidecar-companion/v1',
			'/failed-auth',
			array(
				'methods'             => 'POST',
				'callback'            => 'wpsidecar_companion_failed_auth',
				'permission_callback' => 'wpsidecar_companion_verify',
			)
		);
	}
);

/*
 * Tools → Change history: the site's history of field groups and theme
 * options (docs/api.md §12), with a revert per entry. The page is a shell:
 * everything it shows comes from the sidecar's routes, fetched by the
 * script below with the user's cookie and wp_rest nonce (wp.apiFetch), so
 * the sidecar checks every read and write as it checks any REST request.
 */

const WPSIDECAR_HISTORY_PAGE   = 'wpsidecar-history';
const WPSIDECAR_HISTORY_HANDLE = 'wpsidecar-history';

// Per site, also on a network: each site has a history of its own.
add_action(
	'admin_menu',
	function () {
		$hook = add_management_page(
			__( 'Change history', 'wpsidecar' ),
			__( 'Change history', 'wpsidecar' ),
			'manage_options',
			WPSIDECAR_HISTORY_PAGE,
			'wpsidecar_history_render'
		);
		if ( $hook ) {
			add_action( 'load-' . $hook, 'wpsidecar_history_load' );
		}
	}
);

function wpsidecar_history_load() {
	add_action( 'admin_enqueue_scripts', 'wpsidecar_history_enqueue' );
}

/**
 * The script and its style, inline: the plugin stays one file to copy.
 */
function wpsidecar_history_enqueue() {
	wp_register_script( WPSIDECAR_HISTORY_HANDLE, false, array( 'wp-api-fetch', 'wp-i18n' ), '1.0.0', true );
	wp_add_inline_script( WPSIDECAR_HISTORY_HANDLE, wpsidecar_history_script() );
	wp_enqueue_script( WPSIDECAR_HISTORY_HANDLE );
	wp_register_style( WPSIDECAR_HISTORY_HANDLE, false, array(), '1.0.0' );
	wp_add_inline_style( WPSIDECAR_HISTORY_HANDLE, wpsidecar_history_style() );
	wp_enqueue_style( WPSIDECAR_HISTORY_HANDLE );
}

/**
 * The page's fixed parts; the script fills the table and shows notices.
 */
function wpsidecar_history_render() {
	if ( ! current_user_can( 'manage_options' ) ) {
		wp_die( esc_html__( 'Sorry, you are not allowed to access this page.', 'wpsidecar' ), 403 );
	}
	?>
	<div class="wrap" id="wpsidecar-history" data-state="loading">
		<h1><?php esc_html_e( 'Change history', 'wpsidecar' ); ?></h1>
		<hr class="wp-header-end">
		<noscript><div class="notice notice-error"><p><?php esc_html_e( 'The change history needs JavaScript.', 'wpsidecar' ); ?></p></div></noscript>
		<p><?php esc_html_e( 'Every change to the field groups and theme options of this site, newest first. A revert writes back the value from before the change.', 'wpsidecar' ); ?></p>

		<form id="wpsidecar-history-filters" class="wpsidecar-history-filters">
			<label for="wpsidecar-filter-namespace"><?php esc_html_e( 'Type', 'wpsidecar' ); ?></label>
			<select id="wpsidecar-filter-namespace" name="namespace">
				<option value=""><?php esc_html_e( 'All', 'wpsidecar' ); ?></option>
				<option value="fieldmgr"><?php esc_html_e( 'Field groups', 'wpsidecar' ); ?></option>
				<option value="themeopts"><?php esc_html_e( 'Theme options', 'wpsidecar' ); ?></option>
			</select>
			<label for="wpsidecar-filter-key"><?php esc_html_e( 'Item (exact key)', 'wpsidecar' ); ?></label>
			<input type="text" id="wpsidecar-filter-key" name="key" class="regular-text" spellcheck="false" autocomplete="off">
			<label for="wpsidecar-filter-since"><?php esc_html_e( 'Changed since', 'wpsidecar' ); ?></label>
			<input type="date" id="wpsidecar-filter-since" name="since">
			<button type="submit" id="wpsidecar-filter-apply" class="button"><?php esc_html_e( 'Filter', 'wpsidecar' ); ?></button>
		</form>

		<p id="wpsidecar-history-status" role="status"></p>

		<table id="wpsidecar-history-table" class="wp-list-table widefat striped">
			<caption class="screen-reader-text"><?php esc_html_e( 'Changes, newest first', 'wpsidecar' ); ?></caption>
			<thead>
				<tr>
					<th scope="col"><?php esc_html_e( 'When', 'wpsidecar' ); ?></th>
					<th scope="col"><?php esc_html_e( 'Who', 'wpsidecar' ); ?></th>
					<th scope="col"><?php esc_html_e( 'Via', 'wpsidecar' ); ?></th>
					<th scope="col"><?php esc_html_e( 'Type', 'wpsidecar' ); ?></th>
					<th scope="col"><?php esc_html_e( 'Item', 'wpsidecar' ); ?></th>
					<th scope="col"><?php esc_html_e( 'Change', 'wpsidecar' ); ?></th>
					<th scope="col"><span class="screen-reader-text"><?php esc_html_e( 'Actions', 'wpsidecar' ); ?></span></th>
				</tr>
			</thead>
			<tbody>
				<tr class="no-items"><td colspan="7"><?php esc_html_e( 'Loading…', 'wpsidecar' ); ?></td></tr>
			</tbody>
		</table>

		<div class="tablenav bottom">
			<div class="tablenav-pages">
				<button type="button" id="wpsidecar-page-prev" class="button" disabled>
					<span aria-hidden="true">‹</span> <?php esc_html_e( 'Previous page', 'wpsidecar' ); ?>
				</button>
				<span id="wpsidecar-page-label" class="paging-input"></span>
				<button type="button" id="wpsidecar-page-next" class="button" disabled>
					<?php esc_html_e( 'Next page', 'wpsidecar' ); ?> <span aria-hidden="true">›</span>
				</button>
			</div>
			<br class="clear">
		</div>

		<dialog id="wpsidecar-revert-dialog" aria-labelledby="wpsidecar-revert-title" aria-describedby="wpsidecar-revert-summary">
			<h2 id="wpsidecar-revert-title"><?php esc_html_e( 'Revert this change?', 'wpsidecar' ); ?></h2>
			<p id="wpsidecar-revert-summary"></p>
			<div id="wpsidecar-revert-value"></div>
			<div id="wpsidecar-revert-state"></div>
			<p id="wpsidecar-revert-progress" role="status"></p>
			<p class="wpsidecar-revert-buttons">
				<button type="button" id="wpsidecar-revert-confirm" class="button button-primary"><?php esc_html_e( 'Revert', 'wpsidecar' ); ?></button>
				<button type="button" id="wpsidecar-revert-cancel" class="button"><?php esc_html_e( 'Cancel', 'wpsidecar' ); ?></button>
			</p>
		</dialog>
	</div>
	<?php
}

/**
 * The page's style: wp-admin's own classes do the rest.
 */
function wpsidecar_history_style() {
	return <<<'CSS'
#wpsidecar-history .wpsidecar-history-filters { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 8px; margin: 1em 0; }
#wpsidecar-history .wpsidecar-history-filters label { font-weight: 600; }
CSS;
}

/**
 * The page's script (nowdoc: nothing in it is PHP).
 */
function wpsidecar_history_script() {
	return <<<'JS'
( function () {
	'use strict';
	var root = document.getElementById( 'wpsidecar-history' );
	if ( root ) {
		root.setAttribute( 'data-state', 'ready' );
	}
}() );
JS;
}
