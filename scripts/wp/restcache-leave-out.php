<?php
/**
 * Plugin Name: Leave chosen REST routes out of shared caches
 * Description: The snippet of docs/rest-cache.md ("Leaving a route out"),
 * with the routes the end-to-end tests leave out: rctest/v1/plain (from
 * restcache-test.php) and a user, so that a post embedding its author is
 * left out too.
 */

add_filter(
	'rest_post_dispatch',
	function ( $response, $server, $request ) {
		// Routes whose answers depend on more than the database, as
		// regular expressions matched against the REST route.
		$left_out = array(
			'#^/rctest/v1/plain$#',
			'#^/wp/v2/users/\d+$#',
		);
		foreach ( $left_out as $pattern ) {
			if ( preg_match( $pattern, $request->get_route() ) ) {
				// On the response: replaces a Cache-Control another filter
				// set before this one (hence the late priority).
				$response->header( 'Cache-Control', 'no-store' );
				// And at once: ?_envelope sends a new response without
				// these headers, and an answer that embeds this route
				// (?_embed) is sent with the outer route's headers.
				$server->send_header( 'Cache-Control', 'no-store' );
				break;
			}
		}
		return $response;
	},
	99,
	3
);
