<?php
// A chain of a static method, an instance method, a static method and a
// plain function, spinning in the innermost one, for argv[1] seconds:
//   {main} -> Router::dispatch -> Cart::total -> Price::round -> php_leaf
// tests/e2e/test_php.c checks the chain and the line of each call.

function php_leaf($x)
{
    $s = 0;
    for ($i = 0; $i < 20000; $i++) { // loop: php_leaf
        $s = ($s + $i + $x) & 0xffff; // loop body: php_leaf
    }
    return $s;
}

class Price
{
    public static function round($x)
    {
        return php_leaf($x); // call: Price::round
    }
}

class Cart
{
    public function total($n)
    {
        $t = 0;
        for ($i = 0; $i < $n; $i++) {
            $t += Price::round($i); // call: Cart::total
        }
        return $t;
    }
}

class Router
{
    public static function dispatch($cart, $until)
    {
        $t = 0;
        while (microtime(true) < $until) {
            $t += $cart->total(20); // call: Router::dispatch
        }
        return $t;
    }
}

$seconds = isset($argv[1]) ? (int)$argv[1] : 10;
echo "ready\n";
flush();
Router::dispatch(new Cart(), microtime(true) + $seconds); // call: {main}
