// build: go build
// Go (which keeps frame pointers on amd64): main.main -> main.chain_01 ->
// ... -> main.chain_12 -> main.leaf, every function //go:noinline; leaf
// spins on the CPU.
// Usage: go_chain SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func leaf(x uint64, deadline time.Time) uint64 {
	for {
		for i := 0; i < 1000000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if !time.Now().Before(deadline) {
			return x
		}
	}
}

//go:noinline
func chain_12(x uint64, d time.Time) uint64 { return leaf(x+12, d) ^ 12 }

//go:noinline
func chain_11(x uint64, d time.Time) uint64 { return chain_12(x+11, d) ^ 11 }

//go:noinline
func chain_10(x uint64, d time.Time) uint64 { return chain_11(x+10, d) ^ 10 }

//go:noinline
func chain_09(x uint64, d time.Time) uint64 { return chain_10(x+9, d) ^ 9 }

//go:noinline
func chain_08(x uint64, d time.Time) uint64 { return chain_09(x+8, d) ^ 8 }

//go:noinline
func chain_07(x uint64, d time.Time) uint64 { return chain_08(x+7, d) ^ 7 }

//go:noinline
func chain_06(x uint64, d time.Time) uint64 { return chain_07(x+6, d) ^ 6 }

//go:noinline
func chain_05(x uint64, d time.Time) uint64 { return chain_06(x+5, d) ^ 5 }

//go:noinline
func chain_04(x uint64, d time.Time) uint64 { return chain_05(x+4, d) ^ 4 }

//go:noinline
func chain_03(x uint64, d time.Time) uint64 { return chain_04(x+3, d) ^ 3 }

//go:noinline
func chain_02(x uint64, d time.Time) uint64 { return chain_03(x+2, d) ^ 2 }

//go:noinline
func chain_01(x uint64, d time.Time) uint64 { return chain_02(x+1, d) ^ 1 }

func main() {
	seconds := 10
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			seconds = n
		}
	}
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	fmt.Println("ready")
	r := chain_01(uint64(seconds), deadline)
	fmt.Println(r & 1)
}
