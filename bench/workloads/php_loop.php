<?php
// A busy PHP workload for the benchmarks: DEPTH nested PHP calls, then a
// loop of pure-PHP arithmetic until SECONDS have passed. Prints "ready" once
// running. Usage: php8.2 php_loop.php SECONDS DEPTH

function leaf_loop($until)
{
    $x = 1;
    while (microtime(true) < $until) {
        for ($i = 0; $i < 1000; $i++) {
            $x = ($x * 1103515245 + 12345) & 0xFFFFFFFF;
        }
    }
    return $x;
}

function nest($depth, $until)
{
    if ($depth <= 1) {
        return leaf_loop($until);
    }
    return nest($depth - 1, $until);
}

$seconds = isset($argv[1]) ? (int)$argv[1] : 60;
$depth = isset($argv[2]) ? (int)$argv[2] : 40;
echo "ready\n";
flush();
nest($depth, microtime(true) + $seconds);
