<?php
// A fiber spinning in fiber_leaf, suspended after each slice and resumed by
// drive(), for argv[1] seconds:
//   fiber: [zend_fiber_execute ... zend_call_function] -> fiber_body -> fiber_leaf
// tests/e2e/test_php.c checks the fiber's frames, on its own C stack.

function fiber_leaf($n)
{
    $s = 0;
    for ($i = 0; $i < $n; $i++) {
        $s = ($s + $i) & 0xffff;
    }
    return $s;
}

function fiber_body($until)
{
    $t = 0;
    while (microtime(true) < $until) {
        $t += fiber_leaf(20000);
        Fiber::suspend();
    }
    return $t;
}

function drive($until)
{
    $fiber = new Fiber('fiber_body');
    $fiber->start($until);
    while (!$fiber->isTerminated()) {
        $fiber->resume();
    }
}

$seconds = isset($argv[1]) ? (int)$argv[1] : 10;
echo "ready\n";
flush();
drive(microtime(true) + $seconds);
