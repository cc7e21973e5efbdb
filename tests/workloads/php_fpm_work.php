<?php
// A CPU-bound request for php-fpm: spins in fpm_leaf for the seconds the
// query string asks (tests/e2e/test_php.c sends it with cgi-fcgi).
//   {main} -> handle_request -> fpm_leaf

function fpm_leaf($x)
{
    $s = 0;
    for ($i = 0; $i < 3000; $i++) {
        $s += ($i * $x) % 7;
    }
    return $s;
}

function handle_request($seconds)
{
    $until = microtime(true) + $seconds;
    $t = 0;
    for ($n = 0; microtime(true) < $until; $n++) {
        $t += fpm_leaf($n); // call: handle_request
    }
    return $t;
}

$seconds = isset($_GET['s']) ? (int)$_GET['s'] : 5;
echo handle_request($seconds), "\n"; // call: {main}
