// build: rustc -C opt-level=2 -C symbol-mangling-version=v0 -C debuginfo=0
//! Rust with v0 symbol mangling (`_R...` names): main -> rv_outer ->
//! rv_middle -> rv_leaf, every function #[inline(never)], rv_leaf generic
//! so its v0 name carries a type argument. No DWARF: the names come from
//! .symtab and must be demangled from v0.
//! Usage: rust_v0 SECONDS

use std::io::Write;
use std::time::{Duration, Instant};

#[inline(never)]
fn rv_leaf<T: Into<u64> + Copy>(seed: T, deadline: Instant) -> u64 {
    let mut x: u64 = seed.into();
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

#[inline(never)]
fn rv_middle(x: u32, deadline: Instant) -> u64 {
    rv_leaf::<u32>(x.wrapping_add(2), deadline) ^ 2
}

#[inline(never)]
fn rv_outer(x: u32, deadline: Instant) -> u64 {
    rv_middle(x.wrapping_add(1), deadline) ^ 1
}

fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut out = std::io::stdout();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    let r = rv_outer(seconds as u32, deadline);
    println!("{}", r & 1);
}
