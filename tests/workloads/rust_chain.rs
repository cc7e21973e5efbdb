// build: rustc -C opt-level=2 -C force-frame-pointers=no -C debuginfo=1
//! Rust without frame pointers: main -> rc_link_01 -> ... -> rc_link_12 ->
//! rc_leaf, every function #[inline(never)]; rc_leaf spins on the CPU. Some
//! links keep a local array so their frames differ in size.
//! Usage: rust_chain SECONDS

use std::io::Write;
use std::time::{Duration, Instant};

#[inline(never)]
fn rc_leaf(mut x: u64, deadline: Instant) -> u64 {
    loop {
        for _ in 0..1_000_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        if Instant::now() >= deadline {
            return x;
        }
    }
}

// Each link uses its callee's result, so the call stays a call.
macro_rules! link {
    ($name:ident, $next:ident, $k:expr) => {
        #[inline(never)]
        fn $name(x: u64, deadline: Instant) -> u64 {
            $next(x.wrapping_add($k), deadline) ^ $k
        }
    };
}

// A link with a local array the optimizer cannot drop: a bigger frame.
macro_rules! link_array {
    ($name:ident, $next:ident, $k:expr, $len:expr) => {
        #[inline(never)]
        fn $name(x: u64, deadline: Instant) -> u64 {
            let mut pad = [0u8; $len];
            pad[(x as usize) % $len] = x as u8;
            let pad = unsafe { std::ptr::read_volatile(&pad) };
            let r = $next(x.wrapping_add(pad[(x as usize >> 3) % $len] as u64), deadline);
            r ^ pad[(x as usize) % $len] as u64 ^ $k
        }
    };
}

link!(rc_link_12, rc_leaf, 12);
link_array!(rc_link_11, rc_link_12, 11, 64);
link!(rc_link_10, rc_link_11, 10);
link!(rc_link_09, rc_link_10, 9);
link_array!(rc_link_08, rc_link_09, 8, 700);
link!(rc_link_07, rc_link_08, 7);
link!(rc_link_06, rc_link_07, 6);
link_array!(rc_link_05, rc_link_06, 5, 24);
link!(rc_link_04, rc_link_05, 4);
link!(rc_link_03, rc_link_04, 3);
link_array!(rc_link_02, rc_link_03, 2, 4100);
link!(rc_link_01, rc_link_02, 1);

fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut out = std::io::stdout();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    let r = rc_link_01(seconds, deadline);
    println!("{}", r & 1);
}
