<?php
define( 'DB_NAME', 'wpsidecar_layouts' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '127.0.0.1:3306' );
define( 'WP_ENVIRONMENT_TYPE', 'local' );
define( 'AUTH_KEY',         'secret auth key' );
define( 'SECURE_AUTH_KEY',  'secret secure auth key' );
define( 'LOGGED_IN_KEY',    'secret logged in key' );
define( 'NONCE_KEY',        'secret nonce key' );
define( 'AUTH_SALT',        'secret auth salt' );
define( 'SECURE_AUTH_SALT', 'secret secure auth salt' );
define( 'LOGGED_IN_SALT',   'secret logged in salt' );
define( 'NONCE_SALT',       'secret nonce salt' );
