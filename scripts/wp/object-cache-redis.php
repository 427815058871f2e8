<?php
/**
 * Plugin Name: wpsidecar test cache (keys named as the Redis Object Cache drop-in names them)
 *
 * A small persistent object cache on phpredis, written for wpsidecar's
 * end-to-end tests: a real PHP reader whose Redis keys are named exactly as
 * the widely used Redis Object Cache drop-in (rhubarbgroup/redis-cache)
 * names them, {salt}{prefix}:{group}:{key}, so the tests prove that the
 * sidecar deletes the keys PHP reads. It is not that drop-in and lacks its
 * features (clusters, sentinels, igbinary, diagnostics, flush strategies).
 *
 * Configuration: WP_REDIS_HOST, WP_REDIS_PORT, WP_REDIS_PASSWORD,
 * WP_REDIS_DATABASE, WP_REDIS_TIMEOUT, WP_REDIS_PREFIX (else the environment's
 * WP_REDIS_PREFIX, else WP_CACHE_KEY_SALT), WP_REDIS_DISABLED.
 *
 * wp-includes/cache-compat.php supplies the *_multiple functions,
 * wp_cache_flush_runtime, wp_cache_flush_group and wp_cache_supports.
 */

if ( defined( 'WP_REDIS_DISABLED' ) && WP_REDIS_DISABLED ) {
	return;
}

function wp_cache_init() {
	if ( ! defined( 'WP_REDIS_PREFIX' ) && getenv( 'WP_REDIS_PREFIX' ) ) {
		define( 'WP_REDIS_PREFIX', getenv( 'WP_REDIS_PREFIX' ) );
	}
	if ( defined( 'WP_CACHE_KEY_SALT' ) && ! defined( 'WP_REDIS_PREFIX' ) ) {
		define( 'WP_REDIS_PREFIX', WP_CACHE_KEY_SALT );
	}
	$GLOBALS['wp_object_cache'] = new WP_Object_Cache();
}

function wp_cache_add( $key, $data, $group = '', $expire = 0 ) {
	return $GLOBALS['wp_object_cache']->add( $key, $data, $group, (int) $expire );
}

function wp_cache_replace( $key, $data, $group = '', $expire = 0 ) {
	return $GLOBALS['wp_object_cache']->replace( $key, $data, $group, (int) $expire );
}

function wp_cache_set( $key, $data, $group = '', $expire = 0 ) {
	return $GLOBALS['wp_object_cache']->set( $key, $data, $group, (int) $expire );
}

function wp_cache_get( $key, $group = '', $force = false, &$found = null ) {
	return $GLOBALS['wp_object_cache']->get( $key, $group, $force, $found );
}

function wp_cache_delete( $key, $group = '' ) {
	return $GLOBALS['wp_object_cache']->delete( $key, $group );
}

function wp_cache_incr( $key, $offset = 1, $group = '' ) {
	return $GLOBALS['wp_object_cache']->incr( $key, $offset, $group );
}

function wp_cache_decr( $key, $offset = 1, $group = '' ) {
	return $GLOBALS['wp_object_cache']->incr( $key, -$offset, $group );
}

function wp_cache_flush() {
	return $GLOBALS['wp_object_cache']->flush();
}

function wp_cache_close() {
	return true;
}

function wp_cache_add_global_groups( $groups ) {
	$GLOBALS['wp_object_cache']->add_global_groups( $groups );
}

function wp_cache_add_non_persistent_groups( $groups ) {
	$GLOBALS['wp_object_cache']->add_non_persistent_groups( $groups );
}

function wp_cache_switch_to_blog( $blog_id ) {
	$GLOBALS['wp_object_cache']->switch_to_blog( $blog_id );
}

function wp_cache_reset() {
	$GLOBALS['wp_object_cache']->local = array();
}

class WP_Object_Cache {
	/** @var Redis */
	private $redis;
	/** Values read or written in this request, by full key. */
	public $local = array();
	private $global_groups = array();
	private $non_persistent = array();
	private $global_prefix;
	private $blog_prefix;

	public function __construct() {
		global $blog_id, $table_prefix;
		$this->redis = new Redis();
		$this->redis->connect(
			defined( 'WP_REDIS_HOST' ) ? WP_REDIS_HOST : '127.0.0.1',
			defined( 'WP_REDIS_PORT' ) ? (int) WP_REDIS_PORT : 6379,
			defined( 'WP_REDIS_TIMEOUT' ) ? (float) WP_REDIS_TIMEOUT : 1.0
		);
		if ( defined( 'WP_REDIS_PASSWORD' ) && WP_REDIS_PASSWORD !== '' ) {
			$this->redis->auth( WP_REDIS_PASSWORD );
		}
		if ( defined( 'WP_REDIS_DATABASE' ) ) {
			$this->redis->select( (int) WP_REDIS_DATABASE );
		}
		$this->global_prefix = is_multisite() ? '' : $table_prefix;
		$this->blog_prefix   = is_multisite() ? $blog_id : $table_prefix;
	}

	public function key( $key, $group ) {
		if ( empty( $group ) ) {
			$group = 'default';
		}
		$group  = str_replace( ':', '-', (string) $group );
		$key    = str_replace( ':', '-', (string) $key );
		$salt   = defined( 'WP_REDIS_PREFIX' ) ? trim( WP_REDIS_PREFIX ) : '';
		$prefix = isset( $this->global_groups[ $group ] ) ? $this->global_prefix : $this->blog_prefix;
		$prefix = trim( (string) $prefix, '_-:$' );
		return "{$salt}{$prefix}:{$group}:{$key}";
	}

	private function persistent( $group ) {
		return ! isset( $this->non_persistent[ empty( $group ) ? 'default' : $group ] );
	}

	private static function copy( $value ) {
		return is_object( $value ) ? clone $value : $value;
	}

	public function get( $key, $group = '', $force = false, &$found = null ) {
		$k = $this->key( $key, $group );
		if ( array_key_exists( $k, $this->local ) && ( ! $force || ! $this->persistent( $group ) ) ) {
			$found = true;
			return self::copy( $this->local[ $k ] );
		}
		if ( ! $this->persistent( $group ) ) {
			$found = false;
			return false;
		}
		$raw = $this->redis->get( $k );
		if ( $raw === false ) {
			$found = false;
			return false;
		}
		$found             = true;
		$this->local[ $k ] = unserialize( $raw );
		return self::copy( $this->local[ $k ] );
	}

	public function set( $key, $data, $group = '', $expire = 0 ) {
		$k                 = $this->key( $key, $group );
		$this->local[ $k ] = self::copy( $data );
		if ( ! $this->persistent( $group ) ) {
			return true;
		}
		return $expire > 0
			? $this->redis->setex( $k, $expire, serialize( $data ) )
			: $this->redis->set( $k, serialize( $data ) );
	}

	public function add( $key, $data, $group = '', $expire = 0 ) {
		if ( function_exists( 'wp_suspend_cache_addition' ) && wp_suspend_cache_addition() ) {
			return false;
		}
		$this->get( $key, $group, false, $found );
		return $found ? false : $this->set( $key, $data, $group, $expire );
	}

	public function replace( $key, $data, $group = '', $expire = 0 ) {
		$this->get( $key, $group, false, $found );
		return $found ? $this->set( $key, $data, $group, $expire ) : false;
	}

	public function delete( $key, $group = '' ) {
		$k     = $this->key( $key, $group );
		$had   = array_key_exists( $k, $this->local );
		unset( $this->local[ $k ] );
		if ( ! $this->persistent( $group ) ) {
			return $had;
		}
		return (bool) $this->redis->del( $k ) || $had;
	}

	public function incr( $key, $offset, $group = '' ) {
		$value = $this->get( $key, $group, false, $found );
		if ( ! $found ) {
			return false;
		}
		$value = max( 0, ( is_numeric( $value ) ? (int) $value : 0 ) + (int) $offset );
		$this->set( $key, $value, $group );
		return $value;
	}

	public function flush() {
		$this->local = array();
		$salt        = defined( 'WP_REDIS_PREFIX' ) ? trim( WP_REDIS_PREFIX ) : '';
		if ( $salt === '' ) {
			return $this->redis->flushDB();
		}
		// Only this site's keys: the tests share one server.
		$this->redis->setOption( Redis::OPT_SCAN, Redis::SCAN_RETRY );
		$it = null;
		while ( $keys = $this->redis->scan( $it, $salt . '*', 1000 ) ) {
			$this->redis->del( $keys );
		}
		return true;
	}

	public function add_global_groups( $groups ) {
		foreach ( (array) $groups as $g ) {
			$this->global_groups[ str_replace( ':', '-', $g ) ] = true;
		}
	}

	public function add_non_persistent_groups( $groups ) {
		foreach ( (array) $groups as $g ) {
			$this->non_persistent[ $g ] = true;
		}
	}

	public function switch_to_blog( $blog_id ) {
		if ( is_multisite() ) {
			$this->blog_prefix = (int) $blog_id;
		}
	}
}
