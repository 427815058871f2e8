<?php
/**
 * Plugin Name: wpsidecar --cache-rest test routes
 * Description: What the end-to-end tests of --cache-rest read through PHP:
 * a post meta shown in REST (rc_note), a REST field read from a plugin's own
 * table (rc_stock, from {prefix}rc_stock), and routes under rctest/v1 whose
 * answers a shared cache may or may not keep.
 */

add_action( 'init', function () {
	register_post_meta( 'post', 'rc_note', array( 'type' => 'string', 'single' => true, 'show_in_rest' => true ) );
} );

add_action( 'rest_api_init', function () {
	register_rest_field( 'post', 'rc_stock', array(
		'get_callback' => function ( $post ) {
			global $wpdb;
			$v = $wpdb->get_var( $wpdb->prepare( "SELECT qty FROM {$wpdb->prefix}rc_stock WHERE post_id = %d", $post['id'] ) );
			return null === $v ? null : (int) $v;
		},
	) );
	// Each answer names the moment PHP made it: a kept answer given again
	// names an earlier one.
	$routes = array(
		'plain'   => array(),
		'cookie'  => array( 'Set-Cookie' => 'rc=1; path=/' ),
		'private' => array( 'Cache-Control' => 'private, max-age=60' ),
		'nostore' => array( 'Cache-Control' => 'no-store' ),
		'nocache' => array( 'Cache-Control' => 'no-cache' ),
		'vary'    => array( 'Vary' => 'User-Agent' ),
	);
	foreach ( $routes as $name => $headers ) {
		register_rest_route( 'rctest/v1', '/' . $name, array(
			'methods'             => 'GET',
			'permission_callback' => '__return_true',
			'callback'            => function () use ( $headers ) {
				$r = new WP_REST_Response( array( 'made' => sprintf( '%.6F', microtime( true ) ) ) );
				foreach ( $headers as $k => $v ) {
					$r->header( $k, $v );
				}
				return $r;
			},
		) );
	}
} );
