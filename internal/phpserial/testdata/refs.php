<?php
// Generates refs.json: values holding PHP references (R:) and shared
// objects (r:), as PHP 8.2 serializes them, with what PHP makes of them:
// serialize(unserialize(s)) and json_encode(unserialize(s)) under a 128M
// memory_limit (a fatal error there is recorded, not thrown).
//
//   php phpserial/testdata/refs.php > phpserial/testdata/refs.json

// nest is the issue's value: $b=[$a]; $b[1]=&$b[0]; $a=$b; n times.
function nest($n, $leaf = 'x') {
    $a = $leaf;
    for ($i = 0; $i < $n; $i++) {
        $b = [$a];
        $b[1] = &$b[0];
        $a = $b;
        unset($b);
    }
    return $a;
}

// objects is the same with one object held twice at each level (r:).
function objects($n) {
    $o = new stdClass;
    $o->leaf = 'x';
    for ($i = 0; $i < $n; $i++) {
        $p = new stdClass;
        $p->l = $o;
        $p->r = $o;
        $o = $p;
    }
    return $o;
}

// phpJSON is json_encode(unserialize($s)) in a PHP of 128M, as a REST
// request would run it.
function phpJSON($s) {
    $code = '$j = json_encode(unserialize(stream_get_contents(STDIN))); echo "ok:", json_last_error_msg(), "|", $j === false ? "false" : "=$j";';
    $p = proc_open([PHP_BINARY, '-d', 'memory_limit=128M', '-d', 'display_errors=stderr', '-r', $code],
        [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    fwrite($pipes[0], $s);
    fclose($pipes[0]);
    $out = stream_get_contents($pipes[1]);
    $err = stream_get_contents($pipes[2]);
    proc_close($p);
    if (!str_starts_with($out, 'ok:')) {
        return ['fatal' => trim(preg_replace('/ in .*$/s', '', preg_replace('/^PHP Fatal error:\s*/', '', $err)))];
    }
    [$msg, $json] = explode('|', substr($out, 3), 2);
    if ($json === 'false') {
        return ['error' => $msg];
    }
    $json = substr($json, 1);
    $r = ['length' => strlen($json), 'sha256' => hash('sha256', $json)];
    if (strlen($json) <= 4096) {
        $r['json'] = $json;
    }
    return $r;
}

// random builds a value of arrays, objects and scalars, then binds some of
// its places to others by reference and reuses some objects.
function random($seed) {
    mt_srand($seed);
    $objects = [];
    $build = function ($d) use (&$build, &$objects) {
        $r = mt_rand(0, 9);
        if ($d > 3 || $r < 3) {
            return [null, true, false, mt_rand(-5, 99), 1.5, 'x', 'ab', ''][mt_rand(0, 7)];
        }
        if ($r == 3 && $objects) {
            return $objects[mt_rand(0, count($objects) - 1)];
        }
        $n = mt_rand(0, 3);
        if ($r < 6) {
            $o = new stdClass;
            for ($i = 0; $i < $n; $i++) {
                $o->{"p$i"} = $build($d + 1);
            }
            $objects[] = $o;
            return $o;
        }
        $a = [];
        for ($i = 0; $i < $n; $i++) {
            $a[mt_rand(0, 1) ? $i : "k$i"] = $build($d + 1);
        }
        return $a;
    };
    $root = ['root' => $build(0), 'more' => $build(1)];
    // Places: [container by reference, key], arrays and objects alike.
    $places = [];
    $walk = function (&$v, $d) use (&$walk, &$places) {
        if ($d > 6) {
            return;
        }
        if (is_array($v)) {
            foreach (array_keys($v) as $k) {
                $places[] = [&$v, $k];
                $walk($v[$k], $d + 1);
            }
        } elseif (is_object($v)) {
            foreach (array_keys(get_object_vars($v)) as $k) {
                $places[] = [$v, $k];
                $walk($v->$k, $d + 1);
            }
        }
    };
    $walk($root, 0);
    for ($i = mt_rand(1, 3); $i > 0 && count($places) > 1; $i--) {
        $from = $places[mt_rand(0, count($places) - 1)];
        $to = $places[mt_rand(0, count($places) - 1)];
        if (is_array($to[0])) {
            $target = &$to[0][$to[1]];
        } else {
            $target = &$to[0]->{$to[1]};
        }
        if (is_array($from[0])) {
            $from[0][$from[1]] = &$target;
        } else {
            $from[0]->{$from[1]} = &$target;
        }
        unset($target);
    }
    return $root;
}

$values = [
    'nest_1' => nest(1),
    'nest_2' => nest(2),
    'nest_5' => nest(5),
    'nest_16' => nest(16),
    'nest_22' => nest(22),
    'nest_40' => nest(40),
    'nest_40_long_leaf' => nest(40, str_repeat('theme-option-value-', 2)),
    'objects_1' => objects(1),
    'objects_5' => objects(5),
    'objects_40' => objects(40),
];
$o = new stdClass;
$o->a = 1;
$values['object_r'] = [$o, $o, [$o]];
$x = ['x' => ['y' => 1, 'z' => [2]]];
$x['w'] = &$x['x']['y'];
$x['v'] = &$x['x']['z'];
$x['u'] = &$x['x']['z'];
$values['nested_R'] = $x;
$y = [$o];
$y[1] = &$y[0];
$y[2] = $o;
$values['R_to_object'] = $y;
$s = new stdClass;
$s->self = $s;
$values['object_self'] = $s;
$c = [1];
$c[1] = &$c;
$values['array_self'] = $c;
$values['options_with_bomb'] = ['color' => '#fff', 'bomb' => nest(40), 'title' => 'x', 'list' => [1, 2]];
for ($seed = 1; $seed <= 200; $seed++) {
    $values["random_$seed"] = random($seed);
}

$out = [];
foreach ($values as $label => $v) {
    $ser = serialize($v);
    $u = unserialize($ser);
    $out[] = ['label' => $label, 'serialize' => $ser, 'reserialize' => serialize($u), 'json_encode' => phpJSON($ser)];
}
echo json_encode(['php' => PHP_VERSION, 'values' => $out], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
