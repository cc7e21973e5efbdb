// build: go build -trimpath
// Go unwound from .gopclntab: main.main -> main.deep_01 -> ... ->
// main.deep_24 -> main.leaf, every function //go:noinline with a frame of
// its own (a local array kept live), leaf spins on the CPU. A second
// goroutine runs the same chain (its root is runtime.goexit, not
// runtime.main) and allocates, so the garbage collector switches to the
// system stack now and then. tests/e2e/test_go.c also builds it stripped.
// Usage: go_deep SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink []byte

//go:noinline
func leaf(x uint64, deadline time.Time, alloc bool) uint64 {
	for {
		for i := 0; i < 1000000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if alloc {
			sink = make([]byte, 1<<16)
		}
		if !time.Now().Before(deadline) {
			return x
		}
	}
}

//go:noinline
func deep_24(x uint64, d time.Time, a bool) uint64 {
	var pad [6]uint64
	pad[x%6] = x
	return leaf(x+24, d, a) ^ pad[(x+1)%6]
}

//go:noinline
func deep_23(x uint64, d time.Time, a bool) uint64 {
	var pad [5]uint64
	pad[x%5] = x
	return deep_24(x+23, d, a) ^ pad[(x+1)%5]
}

//go:noinline
func deep_22(x uint64, d time.Time, a bool) uint64 {
	var pad [4]uint64
	pad[x%4] = x
	return deep_23(x+22, d, a) ^ pad[(x+1)%4]
}

//go:noinline
func deep_21(x uint64, d time.Time, a bool) uint64 {
	var pad [3]uint64
	pad[x%3] = x
	return deep_22(x+21, d, a) ^ pad[(x+1)%3]
}

//go:noinline
func deep_20(x uint64, d time.Time, a bool) uint64 {
	var pad [2]uint64
	pad[x%2] = x
	return deep_21(x+20, d, a) ^ pad[(x+1)%2]
}

//go:noinline
func deep_19(x uint64, d time.Time, a bool) uint64 {
	var pad [6]uint64
	pad[x%6] = x
	return deep_20(x+19, d, a) ^ pad[(x+1)%6]
}

//go:noinline
func deep_18(x uint64, d time.Time, a bool) uint64 {
	var pad [5]uint64
	pad[x%5] = x
	return deep_19(x+18, d, a) ^ pad[(x+1)%5]
}

//go:noinline
func deep_17(x uint64, d time.Time, a bool) uint64 {
	var pad [4]uint64
	pad[x%4] = x
	return deep_18(x+17, d, a) ^ pad[(x+1)%4]
}

//go:noinline
func deep_16(x uint64, d time.Time, a bool) uint64 {
	var pad [3]uint64
	pad[x%3] = x
	return deep_17(x+16, d, a) ^ pad[(x+1)%3]
}

//go:noinline
func deep_15(x uint64, d time.Time, a bool) uint64 {
	var pad [2]uint64
	pad[x%2] = x
	return deep_16(x+15, d, a) ^ pad[(x+1)%2]
}

//go:noinline
func deep_14(x uint64, d time.Time, a bool) uint64 {
	var pad [6]uint64
	pad[x%6] = x
	return deep_15(x+14, d, a) ^ pad[(x+1)%6]
}

//go:noinline
func deep_13(x uint64, d time.Time, a bool) uint64 {
	var pad [5]uint64
	pad[x%5] = x
	return deep_14(x+13, d, a) ^ pad[(x+1)%5]
}

//go:noinline
func deep_12(x uint64, d time.Time, a bool) uint64 {
	var pad [4]uint64
	pad[x%4] = x
	return deep_13(x+12, d, a) ^ pad[(x+1)%4]
}

//go:noinline
func deep_11(x uint64, d time.Time, a bool) uint64 {
	var pad [3]uint64
	pad[x%3] = x
	return deep_12(x+11, d, a) ^ pad[(x+1)%3]
}

//go:noinline
func deep_10(x uint64, d time.Time, a bool) uint64 {
	var pad [2]uint64
	pad[x%2] = x
	return deep_11(x+10, d, a) ^ pad[(x+1)%2]
}

//go:noinline
func deep_09(x uint64, d time.Time, a bool) uint64 {
	var pad [6]uint64
	pad[x%6] = x
	return deep_10(x+9, d, a) ^ pad[(x+1)%6]
}

//go:noinline
func deep_08(x uint64, d time.Time, a bool) uint64 {
	var pad [5]uint64
	pad[x%5] = x
	return deep_09(x+8, d, a) ^ pad[(x+1)%5]
}

//go:noinline
func deep_07(x uint64, d time.Time, a bool) uint64 {
	var pad [4]uint64
	pad[x%4] = x
	return deep_08(x+7, d, a) ^ pad[(x+1)%4]
}

//go:noinline
func deep_06(x uint64, d time.Time, a bool) uint64 {
	var pad [3]uint64
	pad[x%3] = x
	return deep_07(x+6, d, a) ^ pad[(x+1)%3]
}

//go:noinline
func deep_05(x uint64, d time.Time, a bool) uint64 {
	var pad [2]uint64
	pad[x%2] = x
	return deep_06(x+5, d, a) ^ pad[(x+1)%2]
}

//go:noinline
func deep_04(x uint64, d time.Time, a bool) uint64 {
	var pad [6]uint64
	pad[x%6] = x
	return deep_05(x+4, d, a) ^ pad[(x+1)%6]
}

//go:noinline
func deep_03(x uint64, d time.Time, a bool) uint64 {
	var pad [5]uint64
	pad[x%5] = x
	return deep_04(x+3, d, a) ^ pad[(x+1)%5]
}

//go:noinline
func deep_02(x uint64, d time.Time, a bool) uint64 {
	var pad [4]uint64
	pad[x%4] = x
	return deep_03(x+2, d, a) ^ pad[(x+1)%4]
}

//go:noinline
func deep_01(x uint64, d time.Time, a bool) uint64 {
	var pad [3]uint64
	pad[x%3] = x
	return deep_02(x+1, d, a) ^ pad[(x+1)%3]
}

func main() {
	seconds := 10
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			seconds = n
		}
	}
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	done := make(chan uint64)
	go func() { done <- deep_01(7, deadline, true) }()
	fmt.Println("ready")
	r := deep_01(uint64(seconds), deadline, false)
	fmt.Println((r ^ <-done) & 1)
}
