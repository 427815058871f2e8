<?php
/**
 * Plugin Name: fieldmgr twin (tests only)
 * Description: The fieldmgr/v1 read routes as a WordPress plugin would register them, under twin/v1, over the same table: the end-to-end tests send the same request to WordPress's REST server (this) and to the sidecar (fieldmgr/v1) and compare what WordPress's global parameters make of each.
 */

defined( 'ABSPATH' ) || exit;

function wpsidecar_twin_group( $row ) {
	return array(
		'id'         => $row->group_key,
		'title'      => $row->title,
		'config'     => json_decode( $row->config, true ),
		'status'     => $row->status,
		'created_at' => $row->created_at,
		'updated_at' => $row->updated_at,
	);
}

add_action(
	'rest_api_init',
	function () {
		global $wpdb;
		$table = $wpdb->prefix . 'fieldmgr_groups';
		$can   = function () {
			return current_user_can( 'manage_options' );
		};
		register_rest_route(
			'twin/v1',
			'/field-groups',
			array(
				array(
					'methods'             => 'GET',
					'permission_callback' => $can,
					'callback'            => function () use ( $wpdb, $table ) {
						return array_map( 'wpsidecar_twin_group', $wpdb->get_results( "SELECT * FROM $table ORDER BY id" ) );
					},
				),
				array(
					'methods'             => 'POST',
					'permission_callback' => $can,
					'callback'            => function () {
						return new WP_Error( 'twin_read_only', 'The twin does not write.', array( 'status' => 501 ) );
					},
				),
			)
		);
		register_rest_route(
			'twin/v1',
			'/field-groups/(?P<id>[A-Za-z0-9_-]+)',
			array(
				array(
					'methods'             => 'GET',
					'permission_callback' => $can,
					'callback'            => function ( $request ) use ( $wpdb, $table ) {
						$row = $wpdb->get_row( $wpdb->prepare( "SELECT * FROM $table WHERE BINARY group_key = %s", $request['id'] ) );
						return $row ? wpsidecar_twin_group( $row ) : new WP_REST_Response( array( 'error' => 'Field group not found' ), 404 );
					},
				),
				array(
					'methods'             => 'PUT',
					'permission_callback' => $can,
					'callback'            => '__return_null',
				),
				array(
					'methods'             => 'DELETE',
					'permission_callback' => $can,
					'callback'            => function ( $request ) use ( $wpdb, $table ) {
						$n = $wpdb->query( $wpdb->prepare( "DELETE FROM $table WHERE BINARY group_key = %s", $request['id'] ) );
						return $n ? array( 'success' => true, 'message' => 'Field group deleted' ) : new WP_REST_Response( array( 'error' => 'Field group not found' ), 404 );
					},
				),
			)
		);
	}
);
