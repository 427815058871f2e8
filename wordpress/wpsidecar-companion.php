<?php
/**
 * Plugin Name: wpsidecar companion
 * Description: Tells wpsidecar what PHP decides about authentication (application passwords available, per user; REST closed to anonymous users), fires WordPress's failed-login actions for attempts the sidecar refused, so that lockout plugins see them, and shows the sidecar's history of field groups and theme options under Tools → Change history, with a revert per change. Optional: the sidecar works without it.
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
 *
 * Tools → Change history (users with manage_options, on each site of a
 * network) reads and reverts through the sidecar's routes under
 * /wp-json/wpsidecar/, which the web server must send to the sidecar as it
 * sends /wp-json/fieldmgr/ and /wp-json/themeopts/. Its words, the
 * script's too, are translated by wp-content/languages/plugins/
 * wpsidecar-{locale}.mo (text domain wpsidecar).
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
 * No wp_set_script_translations(): WordPress prints no JSON translations
 * for a script without a file (src false), and looking for them warns
 * (6.1: an undefined "path" where the site sits at the root); the
 * prelude hands the script PHP's translations instead.
 */
function wpsidecar_history_enqueue() {
	$script = wpsidecar_history_script();
	wp_register_script( WPSIDECAR_HISTORY_HANDLE, false, array( 'wp-api-fetch', 'wp-i18n' ), '1.0.0', true );
	wp_add_inline_script( WPSIDECAR_HISTORY_HANDLE, wpsidecar_history_prelude( $script ), 'before' );
	wp_add_inline_script( WPSIDECAR_HISTORY_HANDLE, $script );
	wp_enqueue_script( WPSIDECAR_HISTORY_HANDLE );
	wp_register_style( WPSIDECAR_HISTORY_HANDLE, false, array(), '1.0.0' );
	wp_add_inline_style( WPSIDECAR_HISTORY_HANDLE, wpsidecar_history_style() );
	wp_enqueue_style( WPSIDECAR_HISTORY_HANDLE );
}

/**
 * What the script is told before it runs: the site's time zone, the user's
 * locale, and its strings in the user's language. Those come from the
 * plugin's own PHP translations (wpsidecar-{locale}.mo, one file for the
 * whole plugin).
 */
function wpsidecar_history_prelude( $script ) {
	$settings = array(
		'perPage'   => 20,
		'timezone'  => wp_timezone_string(),
		'gmtOffset' => (float) get_option( 'gmt_offset' ),
		'locale'    => str_replace( '_', '-', get_user_locale() ),
	);
	$prelude  = 'window.wpsidecarHistory = ' . wp_json_encode( $settings ) . ';';
	$messages = wpsidecar_history_translations( $script );
	if ( $messages ) {
		$messages[''] = array(
			'domain' => 'wpsidecar',
			'lang'   => get_user_locale(),
		);
		$prelude     .= "\nwp.i18n.setLocaleData( " . wp_json_encode( $messages ) . ", 'wpsidecar' );";
	}
	return $prelude;
}

/**
 * The script's strings (its __( '…', 'wpsidecar' ) calls) that PHP's
 * translations of the text domain translate, as wp.i18n takes them.
 */
function wpsidecar_history_translations( $script ) {
	preg_match_all( "/\\b__\\(\\s*'((?:[^'\\\\]|\\\\.)*)'\\s*,\\s*'wpsidecar'\\s*\\)/", $script, $found );
	$messages = array();
	foreach ( array_unique( $found[1] ) as $quoted ) {
		$msgid = str_replace( array( "\\'", '\\\\' ), array( "'", '\\' ), $quoted );
		// The msgids are the script's own literals, not variables.
		$text = translate( $msgid, 'wpsidecar' ); // phpcs:ignore WordPress.WP.I18n
		if ( $text !== $msgid ) {
			$messages[ $msgid ] = array( $text );
		}
	}
	return $messages;
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
				<?php /* wpsidecar namespaces: begin (generated: go test ./cmd/wpsidecar -run TestNamespaceLists -update) */ ?>
				<option value="fieldmgr"><?php esc_html_e( 'Field groups', 'wpsidecar' ); ?></option>
				<option value="themeopts"><?php esc_html_e( 'Theme options', 'wpsidecar' ); ?></option>
				<?php /* wpsidecar namespaces: end */ ?>
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
/* wp-admin's .button shows itself over the hidden attribute. */
#wpsidecar-history [hidden] { display: none !important; }
#wpsidecar-history .wpsidecar-history-filters { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 8px; margin: 1em 0; }
#wpsidecar-history .wpsidecar-history-filters label { font-weight: 600; }
#wpsidecar-history-status:empty { display: none; }
#wpsidecar-history-table > tbody > tr { background: #fff; }
#wpsidecar-history-table > tbody > tr.alternate,
#wpsidecar-history-table > tbody > tr.alternate + tr.wpsidecar-diff-row { background: #f6f7f7; }
#wpsidecar-history-table .wpsidecar-diff-row > td { padding-top: 0; }
.wpsidecar-diff ul { margin: 0; }
.wpsidecar-diff li { margin: 0 0 .5em; }
.wpsidecar-diff-mark { display: inline-block; min-width: 6.5em; font-weight: 600; }
.wpsidecar-diff-added .wpsidecar-diff-mark { color: #00701a; }
.wpsidecar-diff-removed .wpsidecar-diff-mark { color: #b32d2e; }
.wpsidecar-diff-changed .wpsidecar-diff-mark { color: #996800; }
.wpsidecar-diff-arrow { padding: 0 .4em; }
.wpsidecar-value-long { display: inline-block; vertical-align: top; max-width: 100%; }
.wpsidecar-value-long pre, #wpsidecar-revert-dialog pre { max-height: 20em; overflow: auto; margin: .5em 0; padding: .5em; background: #f6f7f7; border: 1px solid #dcdcde; white-space: pre-wrap; word-break: break-word; }
#wpsidecar-history .tablenav-pages { float: none; display: flex; align-items: center; gap: 8px; margin: 0; }
#wpsidecar-revert-dialog { max-width: 42em; width: calc(100% - 4em); padding: 0 1.5em 1em; border: 1px solid #c3c4c7; box-shadow: 0 3px 30px rgba(0, 0, 0, .2); }
#wpsidecar-revert-dialog::backdrop { background: rgba(0, 0, 0, .5); }
#wpsidecar-revert-dialog .notice { margin: 1em 0; }
#wpsidecar-revert-current:focus { outline: 2px solid #2271b1; outline-offset: 2px; }
.wpsidecar-revert-buttons { display: flex; gap: 8px; }
CSS;
}

/**
 * The page's script (a nowdoc: nothing in it is PHP). Its strings go
 * through wp.i18n with the text domain wpsidecar; every value it shows is
 * set as text, never as markup.
 */
function wpsidecar_history_script() {
	return <<<'JS'
( function () {
	'use strict';

	const root = document.getElementById( 'wpsidecar-history' );
	if ( ! root || ! window.wp || ! window.wp.apiFetch || ! window.wp.i18n ) {
		return;
	}
	const { __, sprintf } = window.wp.i18n;
	const apiFetch = window.wp.apiFetch;
	const settings = window.wpsidecarHistory || {};
	const perPage = settings.perPage || 20;
	// A value whose JSON is longer than this (or spans lines) is folded.
	const foldAt = 80;

	const byId = ( id ) => document.getElementById( id );
	const table = byId( 'wpsidecar-history-table' );
	const tbody = table.tBodies[ 0 ];
	const form = byId( 'wpsidecar-history-filters' );
	const status = byId( 'wpsidecar-history-status' );
	const prev = byId( 'wpsidecar-page-prev' );
	const next = byId( 'wpsidecar-page-next' );
	const pageLabel = byId( 'wpsidecar-page-label' );
	const dialog = byId( 'wpsidecar-revert-dialog' );
	const confirmButton = byId( 'wpsidecar-revert-confirm' );
	const cancelButton = byId( 'wpsidecar-revert-cancel' );
	const headerEnd = root.querySelector( '.wp-header-end' );

	const view = { page: 1, totalPages: 1, query: {}, entries: {}, loads: 0 };

	// el builds an element; strings become text nodes, never markup.
	function el( tag, attrs, children ) {
		const node = document.createElement( tag );
		Object.keys( attrs || {} ).forEach( ( name ) => {
			const value = attrs[ name ];
			if ( value === false || value === null || value === undefined ) {
				return;
			}
			if ( 'text' === name ) {
				node.textContent = value;
			} else if ( 'className' === name ) {
				node.className = value;
			} else {
				node.setAttribute( name, true === value ? '' : String( value ) );
			}
		} );
		( children || [] ).forEach( ( child ) => {
			if ( null !== child && undefined !== child && false !== child ) {
				node.append( child );
			}
		} );
		return node;
	}

	function setStatus( text ) {
		status.textContent = text;
	}

	/* Requests ------------------------------------------------------------ */

	function errorOf( statusCode, body ) {
		const known = body && 'object' === typeof body && 'string' === typeof body.code;
		return {
			status: statusCode,
			code: known ? body.code : 'http_error',
			message: known && 'string' === typeof body.message ? body.message : '',
		};
	}

	function readBody( response ) {
		return response.text().then( ( text ) => {
			try {
				return JSON.parse( text );
			} catch ( e ) {
				return undefined;
			}
		} );
	}

	// request answers {body, headers} or rejects with {status, code,
	// message}: status 0 when nothing answered. parse: false keeps the
	// headers (X-WP-Total) and the status of an error.
	function request( options, retried ) {
		return apiFetch( Object.assign( {}, options, { parse: false } ) ).then(
			( response ) => readBody( response ).then( ( body ) => ( { body, headers: response.headers } ) ),
			( failure ) => {
				if ( ! failure || 'function' !== typeof failure.text ) {
					throw errorOf( 0, null );
				}
				return readBody( failure ).then( ( body ) => {
					const error = errorOf( failure.status, body );
					// A page left open past its nonce's life: ask for a
					// fresh one once, as apiFetch does when it parses.
					if ( 'rest_cookie_invalid_nonce' === error.code && ! retried && apiFetch.nonceEndpoint ) {
						return window.fetch( apiFetch.nonceEndpoint, { credentials: 'same-origin' } )
							.then( ( r ) => ( r.ok ? r.text() : Promise.reject( error ) ) )
							.then( ( nonce ) => {
								apiFetch.nonceMiddleware.nonce = nonce;
								return request( options, true );
							}, () => Promise.reject( error ) );
					}
					throw error;
				} );
			}
		);
	}

	function query( params ) {
		const parts = Object.keys( params ).filter( ( k ) => '' !== params[ k ] && undefined !== params[ k ] )
			.map( ( k ) => encodeURIComponent( k ) + '=' + encodeURIComponent( params[ k ] ) );
		return parts.length ? '?' + parts.join( '&' ) : '';
	}

	/* Errors in plain words --------------------------------------------- */

	function unavailable( error ) {
		return 0 === error.status || error.status >= 500;
	}

	function explain( error ) {
		if ( 'rest_no_route' === error.code ) {
			return __( 'The request did not reach the sidecar: WordPress answered it itself. The web server must send /wp-json/wpsidecar/ to the sidecar, as it sends /wp-json/fieldmgr/ and /wp-json/themeopts/ (see the recipes in the deploy folder of wpsidecar), or the sidecar must sit in front of the whole site.', 'wpsidecar' );
		}
		if ( 'wpsidecar_history_off' === error.code ) {
			return __( 'This site keeps no history: the sidecar runs with --history-retention off.', 'wpsidecar' );
		}
		if ( 401 === error.status || 403 === error.status ) {
			return __( 'You may not see the change history of this site.', 'wpsidecar' ) + ( error.message ? ' ' + error.message : '' );
		}
		if ( unavailable( error ) ) {
			return __( 'The sidecar or the database is unavailable. Try again in a moment.', 'wpsidecar' );
		}
		if ( error.message ) {
			return error.message;
		}
		/* translators: %s: an HTTP status code, e.g. 404 */
		return sprintf( __( 'The request failed (HTTP %s).', 'wpsidecar' ), error.status );
	}

	// showError puts the one error notice into place (the page, or the
	// dialog while it is open: the page behind it is inert).
	function showError( where, error, retry ) {
		const old = byId( 'wpsidecar-history-error' );
		if ( old ) {
			old.remove();
		}
		const text = explain( error );
		const notice = el( 'div', { id: 'wpsidecar-history-error', className: 'notice notice-error', 'data-code': error.code, tabindex: '-1' }, [
			el( 'p', { text } ),
		] );
		if ( retry ) {
			notice.append( el( 'p', {}, [ el( 'button', { type: 'button', className: 'button', text: __( 'Try again', 'wpsidecar' ) } ) ] ) );
			notice.querySelector( 'button' ).addEventListener( 'click', () => {
				notice.remove();
				retry();
			} );
		}
		if ( 'dialog' === where ) {
			notice.setAttribute( 'role', 'alert' );
			byId( 'wpsidecar-revert-state' ).prepend( notice );
		} else {
			headerEnd.after( notice );
			setStatus( text );
		}
		return notice;
	}

	function showDone( text ) {
		clearNotices();
		const notice = el( 'div', { id: 'wpsidecar-history-done', className: 'notice notice-success', tabindex: '-1' }, [ el( 'p', { text } ) ] );
		headerEnd.after( notice );
		return notice;
	}

	function clearNotices() {
		[ 'wpsidecar-history-error', 'wpsidecar-history-done' ].forEach( ( id ) => {
			const node = byId( id );
			if ( node ) {
				node.remove();
			}
		} );
	}

	/* Words for the columns --------------------------------------------- */

	function typeLabel( namespace ) {
		// wpsidecar namespaces: labels begin (generated: go test ./cmd/wpsidecar -run TestNamespaceLists -update)
		if ( 'fieldmgr' === namespace ) {
			return __( 'Field group', 'wpsidecar' );
		}
		if ( 'themeopts' === namespace ) {
			return __( 'Theme option', 'wpsidecar' );
		}
		// wpsidecar namespaces: labels end
		return namespace;
	}

	function viaLabel( via ) {
		switch ( via ) {
			case 'rest':
				return __( 'REST API', 'wpsidecar' );
			case 'import':
				return __( 'Import', 'wpsidecar' );
			case 'revert':
				return __( 'Revert', 'wpsidecar' );
			case 'binlog':
				return __( 'PHP / wp-admin / SQL (seen by the change feed)', 'wpsidecar' );
		}
		return via;
	}

	function whoCell( user ) {
		const login = user && user.login ? String( user.login ) : '';
		if ( 'php' === login ) {
			return [ el( 'code', { text: login } ), el( 'br' ), el( 'span', { className: 'description', text: __( 'changed outside the sidecar', 'wpsidecar' ) } ) ];
		}
		if ( 0 === login.indexOf( 'cli:' ) ) {
			return [ login, el( 'br' ), el( 'span', { className: 'description', text: __( 'command line', 'wpsidecar' ) } ) ];
		}
		return [ login ];
	}

	/* Dates: the site's time zone ---------------------------------------- */

	const zone = ( () => {
		const name = String( settings.timezone || '' );
		if ( ! name || /^[+-]/.test( name ) ) {
			return '';
		}
		try {
			new Intl.DateTimeFormat( 'en-US', { timeZone: name } );
			return name;
		} catch ( e ) {
			return '';
		}
	} )();
	const fixedOffset = Math.round( ( Number( settings.gmtOffset ) || 0 ) * 60 );
	const locale = ( () => {
		try {
			return Intl.DateTimeFormat.supportedLocalesOf( [ settings.locale ] ).length ? settings.locale : undefined;
		} catch ( e ) {
			return undefined;
		}
	} )();

	function gmtMillis( dateGMT ) {
		const s = String( dateGMT || '' );
		return Date.parse( /(Z|[+-]\d\d:?\d\d)$/i.test( s ) ? s : s + 'Z' );
	}

	// offsetAt: minutes east of GMT in the site's zone at an instant.
	function offsetAt( ms ) {
		if ( ! zone ) {
			return fixedOffset;
		}
		const parts = {};
		new Intl.DateTimeFormat( 'en-US', {
			timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
		} ).formatToParts( new Date( ms ) ).forEach( ( p ) => {
			parts[ p.type ] = Number( p.value );
		} );
		const local = Date.UTC( parts.year, parts.month - 1, parts.day, parts.hour % 24, parts.minute, parts.second );
		return Math.round( ( local - Math.floor( ms / 1000 ) * 1000 ) / 60000 );
	}

	function offsetName( minutes ) {
		const abs = Math.abs( minutes );
		const hh = String( Math.floor( abs / 60 ) ).padStart( 2, '0' );
		const mm = String( abs % 60 ).padStart( 2, '0' );
		return 'UTC' + ( minutes < 0 ? '-' : '+' ) + hh + ':' + mm;
	}

	function formatWhen( ms ) {
		const fields = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' };
		if ( zone ) {
			return new Intl.DateTimeFormat( locale, Object.assign( fields, { timeZone: zone, timeZoneName: 'short' } ) ).format( new Date( ms ) );
		}
		// A fixed offset: shown as the GMT time moved by it, named.
		const shifted = new Intl.DateTimeFormat( locale, Object.assign( fields, { timeZone: 'UTC' } ) ).format( new Date( ms + fixedOffset * 60000 ) );
		return shifted + ' ' + offsetName( fixedOffset );
	}

	// sinceParam: the start of a day (YYYY-MM-DD) in the site's time zone,
	// in GMT, as the route takes it.
	function sinceParam( day ) {
		const p = day.split( '-' ).map( Number );
		const midnight = Date.UTC( p[ 0 ], p[ 1 ] - 1, p[ 2 ] );
		let t = midnight - offsetAt( midnight ) * 60000;
		t = midnight - offsetAt( t ) * 60000;
		return new Date( t ).toISOString().replace( /\.\d+Z$/, 'Z' );
	}

	/* Values and their differences ---------------------------------------- */

	function isContainer( v ) {
		return null !== v && 'object' === typeof v;
	}

	function same( a, b ) {
		if ( ! isContainer( a ) || ! isContainer( b ) ) {
			return a === b;
		}
		if ( Array.isArray( a ) !== Array.isArray( b ) ) {
			return false;
		}
		const ka = Object.keys( a );
		const kb = Object.keys( b );
		return ka.length === kb.length && ka.every( ( k ) => Object.prototype.hasOwnProperty.call( b, k ) && same( a[ k ], b[ k ] ) );
	}

	// diff lists what differs between two values: keys (or list items)
	// added and removed, and the values changed where both sides hold one
	// that is not a container of the same kind.
	function diff( before, after, path, out ) {
		if ( same( before, after ) ) {
			return out;
		}
		if ( isContainer( before ) && isContainer( after ) && Array.isArray( before ) === Array.isArray( after ) ) {
			const has = ( o, k ) => Object.prototype.hasOwnProperty.call( o, k );
			const keys = Object.keys( before ).concat( Object.keys( after ).filter( ( k ) => ! has( before, k ) ) );
			keys.forEach( ( k ) => {
				const at = path.concat( Array.isArray( before ) ? '[' + k + ']' : k );
				if ( ! has( before, k ) ) {
					out.push( { kind: 'added', path: at, after: after[ k ] } );
				} else if ( ! has( after, k ) ) {
					out.push( { kind: 'removed', path: at, before: before[ k ] } );
				} else {
					diff( before[ k ], after[ k ], at, out );
				}
			} );
			return out;
		}
		out.push( { kind: 'changed', path, before, after } );
		return out;
	}

	// valueNode shows a value as JSON; a long one folded.
	function valueNode( value ) {
		const json = JSON.stringify( value, null, 2 );
		const text = undefined === json ? String( value ) : json;
		if ( text.length <= foldAt && -1 === text.indexOf( '\n' ) ) {
			return el( 'code', { text } );
		}
		let label;
		if ( Array.isArray( value ) ) {
			/* translators: %s: how many items a list holds */
			label = sprintf( __( 'list of %s items', 'wpsidecar' ), value.length );
		} else if ( isContainer( value ) ) {
			/* translators: %s: how many keys an object holds */
			label = sprintf( __( 'object with %s keys', 'wpsidecar' ), Object.keys( value ).length );
		} else {
			/* translators: %s: how many characters a text holds */
			label = sprintf( __( 'text of %s characters', 'wpsidecar' ), String( value ).length );
		}
		return el( 'details', { className: 'wpsidecar-value-long' }, [ el( 'summary', { text: label } ), el( 'pre', { text } ) ] );
	}

	function pathNode( path ) {
		return path.length ? [ el( 'code', { className: 'wpsidecar-diff-path', text: path.join( ' › ' ) } ), ': ' ] : [];
	}

	function mark( kind ) {
		const words = {
			added: __( '+ added', 'wpsidecar' ),
			removed: __( '− removed', 'wpsidecar' ),
			changed: __( 'changed', 'wpsidecar' ),
		};
		return el( 'span', { className: 'wpsidecar-diff-mark', text: words[ kind ] } );
	}

	function changeItem( change ) {
		const li = el( 'li', { className: 'wpsidecar-diff-' + change.kind }, [ mark( change.kind ), ' ' ].concat( pathNode( change.path ) ) );
		if ( 'added' === change.kind ) {
			li.append( valueNode( change.after ) );
		} else if ( 'removed' === change.kind ) {
			li.append( valueNode( change.before ) );
		} else {
			li.append( valueNode( change.before ), el( 'span', { className: 'wpsidecar-diff-arrow', 'aria-hidden': 'true', text: '→' } ),
				el( 'span', { className: 'screen-reader-text', text: __( 'becomes', 'wpsidecar' ) + ' ' } ), valueNode( change.after ) );
		}
		return li;
	}

	// changesOf: null on one side is "did not exist": the whole value
	// added or removed.
	function changesOf( entry ) {
		if ( null === entry.before && null === entry.after ) {
			return [];
		}
		if ( null === entry.before ) {
			return [ { kind: 'added', path: [], after: entry.after, whole: true } ];
		}
		if ( null === entry.after ) {
			return [ { kind: 'removed', path: [], before: entry.before, whole: true } ];
		}
		return diff( entry.before, entry.after, [], [] );
	}

	function diffNode( changes ) {
		if ( ! changes.length ) {
			return el( 'div', { className: 'wpsidecar-diff' }, [ el( 'p', { text: __( 'The value is the same before and after.', 'wpsidecar' ) } ) ] );
		}
		const items = changes.map( ( c ) => {
			const li = changeItem( c );
			if ( c.whole ) {
				li.append( ' ', el( 'span', { className: 'description', text: 'added' === c.kind ? __( '(did not exist before)', 'wpsidecar' ) : __( '(does not exist after)', 'wpsidecar' ) } ) );
			}
			return li;
		} );
		return el( 'div', { className: 'wpsidecar-diff' }, [ el( 'ul', {}, items ) ] );
	}

	function summary( changes ) {
		if ( 1 === changes.length && changes[ 0 ].whole ) {
			return 'added' === changes[ 0 ].kind ? __( 'Created', 'wpsidecar' ) : __( 'Removed', 'wpsidecar' );
		}
		const count = { added: 0, removed: 0, changed: 0 };
		changes.forEach( ( c ) => count[ c.kind ]++ );
		const parts = [];
		/* translators: %s: a number of keys or values */
		if ( count.changed ) { parts.push( sprintf( __( '%s changed', 'wpsidecar' ), count.changed ) ); }
		/* translators: %s: a number of keys or values */
		if ( count.added ) { parts.push( sprintf( __( '%s added', 'wpsidecar' ), count.added ) ); }
		/* translators: %s: a number of keys or values */
		if ( count.removed ) { parts.push( sprintf( __( '%s removed', 'wpsidecar' ), count.removed ) ); }
		return parts.join( ', ' ) || __( 'No difference', 'wpsidecar' );
	}

	/* The table ------------------------------------------------------------ */

	function entryRows( entry, index ) {
		const id = String( entry.id );
		const diffId = 'wpsidecar-diff-' + id;
		const ms = gmtMillis( entry.date_gmt );
		const when = isNaN( ms ) ? String( entry.date_gmt ) : formatWhen( ms );
		const changes = changesOf( entry );
		const toggle = el( 'button', { type: 'button', className: 'button-link wpsidecar-show-diff', 'aria-expanded': 'false', 'aria-controls': diffId, text: __( 'Show', 'wpsidecar' ) } );
		/* translators: %s: a group key or option id */
		toggle.append( el( 'span', { className: 'screen-reader-text', text: ' ' + sprintf( __( 'the change to %s', 'wpsidecar' ), entry.key ) } ) );
		const revertButton = el( 'button', { type: 'button', className: 'button wpsidecar-revert', text: __( 'Revert', 'wpsidecar' ) } );
		/* translators: 1: a group key or option id, 2: a date */
		revertButton.append( el( 'span', { className: 'screen-reader-text', text: ' ' + sprintf( __( 'the change to %1$s of %2$s', 'wpsidecar' ), entry.key, when ) } ) );
		const row = el( 'tr', {
			className: 'wpsidecar-entry' + ( index % 2 ? '' : ' alternate' ),
			'data-entry-id': id, 'data-namespace': entry.namespace, 'data-key': entry.key, 'data-via': entry.via,
		}, [
			el( 'td', {}, [ el( 'time', { datetime: isNaN( ms ) ? false : new Date( ms ).toISOString(), title: String( entry.date_gmt ) + ' GMT', text: when } ) ] ),
			el( 'td', {}, whoCell( entry.user ) ),
			el( 'td', { text: viaLabel( entry.via ) } ),
			el( 'td', { text: typeLabel( entry.namespace ) } ),
			el( 'td', {}, [ el( 'code', { text: entry.key } ) ] ),
			el( 'td', {}, [ summary( changes ), ' ', toggle ] ),
			el( 'td', {}, [ revertButton ] ),
		] );
		const diffRow = el( 'tr', { className: 'wpsidecar-diff-row', id: diffId, hidden: true }, [ el( 'td', { colspan: '7' }, [ diffNode( changes ) ] ) ] );
		toggle.addEventListener( 'click', () => {
			const open = 'true' !== toggle.getAttribute( 'aria-expanded' );
			toggle.setAttribute( 'aria-expanded', String( open ) );
			toggle.firstChild.textContent = open ? __( 'Hide', 'wpsidecar' ) : __( 'Show', 'wpsidecar' );
			diffRow.hidden = ! open;
		} );
		revertButton.addEventListener( 'click', () => openRevert( entry, revertButton ) );
		return [ row, diffRow ];
	}

	function placeholder( text ) {
		tbody.replaceChildren( el( 'tr', { className: 'no-items' }, [ el( 'td', { colspan: '7', text } ) ] ) );
	}

	function paging() {
		prev.disabled = view.page <= 1;
		next.disabled = view.page >= view.totalPages;
		/* translators: 1: the page shown, 2: how many pages there are */
		pageLabel.textContent = sprintf( __( 'Page %1$s of %2$s', 'wpsidecar' ), view.page, view.totalPages );
	}

	function filtered() {
		return Object.keys( view.query ).length > 0;
	}

	// load fetches and shows view.page; it answers the text that says what
	// is shown, or rejects after showing the error. An older load's answer
	// arriving late is dropped.
	function load() {
		const mine = ++view.loads;
		root.setAttribute( 'data-state', 'loading' );
		table.setAttribute( 'aria-busy', 'true' );
		setStatus( __( 'Loading…', 'wpsidecar' ) );
		const params = Object.assign( {}, view.query, { page: view.page, per_page: perPage } );
		return request( { path: '/wpsidecar/v1/history' + query( params ) } ).then( ( res ) => {
			if ( mine !== view.loads ) {
				return '';
			}
			const entries = Array.isArray( res.body ) ? res.body : [];
			const total = parseInt( res.headers.get( 'X-WP-Total' ), 10 ) || 0;
			view.totalPages = Math.max( 1, parseInt( res.headers.get( 'X-WP-TotalPages' ), 10 ) || 1 );
			view.entries = {};
			const rows = [];
			entries.forEach( ( entry, i ) => {
				view.entries[ entry.id ] = entry;
				rows.push( ...entryRows( entry, i ) );
			} );
			tbody.replaceChildren( ...rows );
			let text;
			if ( ! entries.length ) {
				text = filtered() ? __( 'No changes match these filters.', 'wpsidecar' ) : __( 'No changes are recorded yet.', 'wpsidecar' );
				placeholder( text );
			} else {
				/* translators: 1: how many changes match, 2: the page shown, 3: how many pages there are */
				text = sprintf( __( 'Changes: %1$s. Page %2$s of %3$s.', 'wpsidecar' ), total, view.page, view.totalPages );
			}
			paging();
			table.removeAttribute( 'aria-busy' );
			root.setAttribute( 'data-state', 'ready' );
			setStatus( text );
			return text;
		}, ( error ) => {
			if ( mine !== view.loads ) {
				return '';
			}
			// A page the history no longer has (pruned meanwhile): the first.
			if ( 'rest_history_invalid_page_number' === error.code && view.page > 1 ) {
				view.page = 1;
				return load();
			}
			table.removeAttribute( 'aria-busy' );
			root.setAttribute( 'data-state', 'error' );
			placeholder( __( 'The history could not be shown.', 'wpsidecar' ) );
			prev.disabled = true;
			next.disabled = true;
			pageLabel.textContent = '';
			showError( 'page', error, unavailable( error ) ? () => quiet( load() ) : null );
			throw error;
		} );
	}

	function quiet( promise ) {
		promise.catch( () => {} );
	}

	form.addEventListener( 'submit', ( event ) => {
		event.preventDefault();
		const q = {};
		const namespace = byId( 'wpsidecar-filter-namespace' ).value;
		const key = byId( 'wpsidecar-filter-key' ).value.trim();
		const since = byId( 'wpsidecar-filter-since' ).value;
		if ( namespace ) {
			q.namespace = namespace;
		}
		if ( key ) {
			q.key = key;
		}
		if ( /^\d{4}-\d\d-\d\d$/.test( since ) ) {
			q.since = sinceParam( since );
		}
		view.query = q;
		view.page = 1;
		clearNotices();
		quiet( load() );
	} );
	prev.addEventListener( 'click', () => {
		if ( view.page > 1 ) {
			view.page--;
			clearNotices();
			quiet( load() );
		}
	} );
	next.addEventListener( 'click', () => {
		if ( view.page < view.totalPages ) {
			view.page++;
			clearNotices();
			quiet( load() );
		}
	} );

	/* Revert ------------------------------------------------------------ */

	// opening counts the dialog's openings: an answer that comes back
	// after the dialog was closed and opened again (for the same entry,
	// too) is not the new opening's.
	const revert = { entry: null, opener: null, busy: false, focusTo: null, opening: 0 };

	function itemName( entry ) {
		/* translators: 1: "Field group" or "Theme option", 2: its key */
		return sprintf( __( '%1$s “%2$s”', 'wpsidecar' ), typeLabel( entry.namespace ), entry.key );
	}

	function setBusy( busy, text ) {
		revert.busy = busy;
		confirmButton.disabled = busy;
		cancelButton.disabled = busy;
		const force = byId( 'wpsidecar-revert-force' );
		if ( force ) {
			force.disabled = busy;
		}
		byId( 'wpsidecar-revert-progress' ).textContent = text || '';
	}

	function openRevert( entry, opener ) {
		revert.opening++;
		revert.entry = entry;
		revert.opener = opener;
		revert.focusTo = opener;
		clearNotices();
		clearAttempt();
		setBusy( false );
		confirmButton.hidden = false;
		cancelButton.textContent = __( 'Cancel', 'wpsidecar' );
		const name = itemName( entry );
		const value = byId( 'wpsidecar-revert-value' );
		if ( null === entry.before ) {
			/* translators: %s: e.g. Field group “hero” */
			byId( 'wpsidecar-revert-summary' ).textContent = sprintf( __( '%s did not exist before this change: reverting removes it.', 'wpsidecar' ), name );
			value.replaceChildren();
		} else {
			/* translators: %s: e.g. Field group “hero” */
			byId( 'wpsidecar-revert-summary' ).textContent = sprintf( __( 'Reverting writes back the value %s had before this change:', 'wpsidecar' ), name );
			value.replaceChildren( el( 'pre', { text: JSON.stringify( entry.before, null, 2 ) } ) );
		}
		dialog.showModal();
		cancelButton.focus();
	}

	function closeRevert( focusTo ) {
		revert.focusTo = focusTo;
		dialog.close();
	}

	// Back to the button that opened the dialog, or where closeRevert
	// said; Escape closes it too, unless a revert is under way.
	dialog.addEventListener( 'cancel', ( event ) => {
		if ( revert.busy ) {
			event.preventDefault();
		}
	} );
	// A dialog's close event comes after close() returns, as a task of its
	// own: by then the dialog may be open again for another entry (Cancel,
	// then at once another Revert), and that opening's state is not this
	// closing's to clear.
	dialog.addEventListener( 'close', () => {
		if ( dialog.open ) {
			return;
		}
		const target = revert.focusTo;
		revert.entry = null;
		revert.focusTo = null;
		if ( target && target.isConnected ) {
			target.focus();
		}
	} );
	cancelButton.addEventListener( 'click', () => closeRevert( revert.opener ) );
	confirmButton.addEventListener( 'click', () => send( false ) );

	function send( force ) {
		const entry = revert.entry;
		if ( ! entry || revert.busy ) {
			return;
		}
		setBusy( true, __( 'Reverting…', 'wpsidecar' ) );
		request( { path: '/wpsidecar/v1/history/' + encodeURIComponent( entry.id ) + '/revert' + ( force ? '?force=true' : '' ), method: 'POST' } ).then(
			() => reverted( entry ),
			( error ) => {
				setBusy( false );
				if ( 'wpsidecar_history_changed' === error.code && ! force ) {
					changedSince( entry, error );
				} else {
					failed( error );
				}
			}
		);
	}

	// reverted: the notice takes the focus (the list is drawn again, its
	// buttons with it) and is read out; the list follows.
	function reverted( entry ) {
		setBusy( false );
		/* translators: %s: e.g. Field group “hero” */
		const notice = showDone( sprintf( __( 'Reverted: %s has its value from before the change again.', 'wpsidecar' ), itemName( entry ) ) );
		closeRevert( notice );
		quiet( load() );
	}

	function failed( error ) {
		showError( 'dialog', error, null );
		// Not found or not revertable: trying again cannot help.
		if ( 404 === error.status || 409 === error.status ) {
			confirmButton.hidden = true;
			cancelButton.textContent = __( 'Close', 'wpsidecar' );
		}
		( confirmButton.hidden ? cancelButton : confirmButton ).focus();
	}

	// valueBlock: a heading and a value (null: the item does not exist).
	function valueBlock( id, heading, value, absent ) {
		return el( 'div', { id }, [ el( 'h3', { text: heading } ), null === value ? el( 'p', { text: absent } ) : el( 'pre', { text: JSON.stringify( value, null, 2 ) } ) ] );
	}

	// changedSince: someone changed the value after this entry. Read the
	// value now (the newest entry for the same item) and show it beside
	// what reverting would write. When a later change (a revert, say)
	// already put the value back, say so rather than warn of overwriting
	// it; forcing stays offered, for the history may not hold every change
	// (one made while no sidecar ran).
	function changedSince( entry, error ) {
		const opening = revert.opening;
		showError( 'dialog', Object.assign( {}, error, {
			message: __( 'The value was changed after this entry.', 'wpsidecar' ),
		} ), null );
		confirmButton.hidden = true;
		cancelButton.focus();
		byId( 'wpsidecar-revert-progress' ).textContent = __( 'Reading the value now…', 'wpsidecar' );
		request( { path: '/wpsidecar/v1/history' + query( { namespace: entry.namespace, key: entry.key, per_page: 1 } ) } ).then(
			( res ) => Array.isArray( res.body ) && res.body.length ? res.body[ 0 ] : null,
			() => undefined
		).then( ( newest ) => {
			if ( revert.opening !== opening || revert.entry !== entry ) {
				return;
			}
			byId( 'wpsidecar-revert-progress' ).textContent = '';
			const box = el( 'div', { id: 'wpsidecar-revert-current', tabindex: '-1' } );
			const written = valueBlock( 'wpsidecar-revert-written', __( 'Reverting would write', 'wpsidecar' ), entry.before, __( 'Nothing: it would remove it.', 'wpsidecar' ) );
			let forceLabel = __( 'Revert anyway, overwriting the later change', 'wpsidecar' );
			let forceClass = 'button button-primary';
			if ( undefined === newest ) {
				box.append( el( 'p', { text: __( 'The value now could not be read. Reverting anyway overwrites whatever it is.', 'wpsidecar' ) } ), written );
			} else if ( ! newest || String( newest.id ) === String( entry.id ) ) {
				box.append( el( 'p', { text: __( 'The history holds no later change: it was made where the sidecar does not see it (without the change feed), so the value now is not known here. Reverting anyway overwrites whatever it is.', 'wpsidecar' ) } ), written );
			} else if ( same( newest.after, entry.before ) ) {
				box.append( el( 'p', { text: __( 'A later change already put back the value this entry replaced: as the history shows it, it has the value reverting would write, so there is nothing to revert.', 'wpsidecar' ) } ),
					valueBlock( 'wpsidecar-revert-now', __( 'The value now', 'wpsidecar' ), newest.after, __( 'It does not exist now.', 'wpsidecar' ) ) );
				cancelButton.textContent = __( 'Close', 'wpsidecar' );
				forceLabel = __( 'Write it back anyway', 'wpsidecar' );
				forceClass = 'button';
			} else {
				box.append( el( 'p', { text: __( 'Reverting now would overwrite that later change:', 'wpsidecar' ) } ),
					valueBlock( 'wpsidecar-revert-now', __( 'The value now', 'wpsidecar' ), newest.after, __( 'It does not exist now.', 'wpsidecar' ) ), written );
			}
			const force = el( 'button', { type: 'button', id: 'wpsidecar-revert-force', className: forceClass, text: forceLabel } );
			force.addEventListener( 'click', () => send( true ) );
			// The box shows what would be written beside what is there now:
			// the summary's copy of it goes.
			/* translators: %s: e.g. Field group “hero” */
			byId( 'wpsidecar-revert-summary' ).textContent = sprintf( __( 'Reverting this change to %s:', 'wpsidecar' ), itemName( entry ) );
			byId( 'wpsidecar-revert-value' ).replaceChildren();
			const state = byId( 'wpsidecar-revert-state' );
			const old = byId( 'wpsidecar-revert-current' );
			if ( old ) {
				old.remove();
			}
			state.append( box );
			confirmButton.after( force );
			box.focus();
		} );
	}

	// What one attempt showed (its error, the value now, the force button)
	// goes with the dialog: no hidden notice is left behind.
	function clearAttempt() {
		const force = byId( 'wpsidecar-revert-force' );
		if ( force ) {
			force.remove();
		}
		byId( 'wpsidecar-revert-state' ).replaceChildren();
	}
	dialog.addEventListener( 'close', () => {
		if ( ! dialog.open ) { // open again: see the first close listener
			clearAttempt();
		}
	} );

	quiet( load() );
}() );
JS;
}
