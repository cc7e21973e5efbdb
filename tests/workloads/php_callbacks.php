<?php
// PHP called back from C: usort with a PHP comparator and array_map with a
// closure, each spinning in the callback, for argv[1] seconds:
//   {main} -> sort_all -> usort -> [C] -> php_cmp
//   {main} -> map_all -> array_map -> [C] -> {closure}

function php_cmp($a, $b)
{
    $s = 0;
    for ($i = 0; $i < 400; $i++) {
        $s += $i % 3;
    }
    return $a <=> $b;
}

function sort_all($n)
{
    $a = range(1, $n);
    shuffle($a);
    usort($a, 'php_cmp'); // call: sort_all
    return $a[0];
}

function map_all($n)
{
    $f = function ($x) {
        $s = 0;
        for ($i = 0; $i < 2000; $i++) {
            $s += ($i * $x) % 5;
        }
        return $s;
    };
    return array_sum(array_map($f, range(1, $n))); // call: map_all
}

$seconds = isset($argv[1]) ? (int)$argv[1] : 10;
$until = microtime(true) + $seconds;
echo "ready\n";
flush();
while (microtime(true) < $until) {
    sort_all(200);
    map_all(400);
}
