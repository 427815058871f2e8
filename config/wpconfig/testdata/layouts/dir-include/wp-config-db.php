<?php
define( 'DB_NAME', 'wpsidecar_layouts' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '127.0.0.1' . ':' . 3306 );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
