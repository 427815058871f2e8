<?php
// Stands for WordPress: wp-config.php loads it last.
