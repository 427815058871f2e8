<?php
// Checks testdata/wp-vectors.json against the WordPress this script runs in
// (the harness's Debian WordPress 6.1.9, or 6.8 and 7.1 in make
// test-stacks): every vector of a section that records what this version
// answers is computed again with WordPress's own functions, and each
// difference is reported. Prints JSON:
// {"wordpress":"6.1.9","checked":N,"mismatches":["section[i]: …", …]}.
//
//   php vectors-check.php DOCROOT VECTORS.json
//
// The file as a whole was made the same way, section by section, on
// WordPress 6.1.9, 6.8 and 7.1 with PHP 8.2 (testdata/README.md).

if ( $argc < 3 ) {
	fwrite( STDERR, "usage: php vectors-check.php DOCROOT VECTORS.json\n" );
	exit( 2 );
}
$_SERVER['HTTP_HOST']   = getenv( 'WP_HTTP_HOST' ) ?: '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
require rtrim( $argv[1], '/' ) . '/wp-load.php';
require_once ABSPATH . WPINC . '/class-phpass.php';

$v          = json_decode( file_get_contents( $argv[2] ), true );
$checked    = 0;
$mismatches = array();
$expect     = function ( $where, $want, $got ) use ( &$checked, &$mismatches ) {
	$checked++;
	if ( $want !== $got ) {
		$mismatches[] = $where . ': want ' . json_encode( $want ) . ', WordPress gives ' . json_encode( $got );
	}
};

// Password checks: what wp_check_password() answers, as the file has it
// for 6.1.9, or for 7.1 (whose rules 6.8 has too) on 6.8 and later.
$answer = version_compare( $GLOBALS['wp_version'], '6.8', '>=' ) ? 'wp_check_password_7.1' : 'wp_check_password_6.1.9';
foreach ( array( 'phpass' => 'hash', 'other_hash_formats' => 'hash_6.1.9_run' ) as $section => $field ) {
	foreach ( $v[ $section ]['vectors'] as $i => $c ) {
		if ( array_key_exists( $answer, $c ) ) {
			$expect( "$section[$i]", $c[ $answer ], wp_check_password( $c['password'], $c[ $field ] ) );
		}
	}
}
// phpass hashes, recomputed from their setting.
$hasher = new PasswordHash( 8, true );
$crypt  = new ReflectionMethod( $hasher, 'crypt_private' );
$crypt->setAccessible( true );
foreach ( $v['phpass']['vectors'] as $i => $c ) {
	if ( 0 === strpos( $c['setting'], '$P$' ) ) {
		$expect( "phpass[$i].hash", $c['hash'], $crypt->invoke( $hasher, $c['password'], $c['hash'] ) );
	}
}

// DB_HOST parsing (the same in 6.1.9 and 7.1).
global $wpdb;
foreach ( $v['db_host_parsing']['vectors'] as $i => $c ) {
	$r = $wpdb->parse_db_host( $c['DB_HOST'] );
	$got = false === $r ? false : array(
		'host'    => $r[0],
		'port'    => null === $r[1] ? null : (int) $r[1],
		'socket'  => $r[2],
		'is_ipv6' => $r[3],
	);
	$expect( "db_host_parsing[$i]", $c['result'], $got );
}

// PHP serialization (the same in 6.1.9): each value's bytes round-trip
// through unserialize() and serialize(), and JSON is wp_json_encode's.
foreach ( $v['php_serialize']['cases'] as $i => $c ) {
	if ( ! isset( $c['serialize'], $c['wp_json_encode'] ) || preg_match( '/^[CEO]:|[rR]:/', $c['serialize'] ) ) {
		continue; // Objects and references need the classes and runs that made them.
	}
	$value = unserialize( $c['serialize'] );
	$expect( "php_serialize.cases[$i] ({$c['label']}) serialize", $c['serialize'], serialize( $value ) );
	$json = wp_json_encode( $value );
	$expect( "php_serialize.cases[$i] ({$c['label']}) wp_json_encode", $c['wp_json_encode'], false === $json ? false : $json );
}

// sanitize_user() of login names (the same in 6.1.9).
foreach ( $v['sanitize_user_login_lookup']['vectors'] as $i => $c ) {
	$expect( "sanitize_user_login_lookup[$i]", $c['out'], sanitize_user( $c['in'] ) );
}

echo json_encode(
	array(
		'wordpress'  => $GLOBALS['wp_version'],
		'checked'    => $checked,
		'mismatches' => $mismatches,
	),
	JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE
), "\n";
