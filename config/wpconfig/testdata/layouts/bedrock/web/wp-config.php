<?php
/**
 * WordPress's configuration is in config/application.php: this file only
 * loads it (the shape of roots/bedrock's web/wp-config.php).
 */
require_once dirname(__DIR__) . '/vendor/autoload.php';
require_once dirname(__DIR__) . '/config/application.php';
require_once ABSPATH . 'wp-settings.php';
