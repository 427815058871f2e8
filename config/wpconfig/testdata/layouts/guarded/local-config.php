<?php
define( 'WP_LOCAL_DEV', true );
define( 'DB_NAME', 'wpsidecar_layouts' );
define( 'WP_ENVIRONMENT_TYPE', 'local' );
