<?php
define( 'AUTH_KEY',         'include auth key' );
define( 'SECURE_AUTH_KEY',  'include secure auth key' );
define( 'LOGGED_IN_KEY',    'include logged in key' );
define( 'NONCE_KEY',        'include nonce key' );
define( 'AUTH_SALT',        'include auth salt' );
define( 'SECURE_AUTH_SALT', 'include secure auth salt' );
define( 'LOGGED_IN_SALT',   'include logged in salt' );
define( 'NONCE_SALT',       'include nonce salt' );
