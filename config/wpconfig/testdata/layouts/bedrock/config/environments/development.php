<?php
/**
 * The development environment's changes, applied over application.php's.
 */

use Roots\WPConfig\Config;

use function Env\env;

// This machine is a developer's own.
Config::define('WP_ENVIRONMENT_TYPE', 'local');

Config::define('SAVEQUERIES', true);
Config::define('WP_DEBUG', true);
Config::define('WP_DEBUG_DISPLAY', true);
Config::define('WP_DISABLE_FATAL_ERROR_HANDLER', true);
Config::define('SCRIPT_DEBUG', true);
Config::define('DISALLOW_INDEXING', true);

ini_set('display_errors', '1');

// A development database of its own.
Config::define('DB_NAME', env('DEV_DB_NAME') ?: Config::get('DB_NAME'));
