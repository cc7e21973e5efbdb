// build: go build -trimpath
// cgo: main.main -> main.outer -> main.callC -> C's go_cgo_spin ->
// go_cgo_leaf, which spins on the CPU. The C code runs on the thread's
// system stack (g0): runtime.cgocall switches there in runtime.asmcgocall,
// so the walk from C back to Go goes through a Go stack switch.
// Usage: go_cgo SECONDS
package main

/*
#include <time.h>

__attribute__((noinline)) unsigned long go_cgo_leaf(unsigned long x, long seconds)
{
	time_t end = time(NULL) + seconds;

	while (time(NULL) < end)
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) unsigned long go_cgo_spin(unsigned long x, long seconds)
{
	return go_cgo_leaf(x, seconds) + 1;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func callC(x uint64, seconds int) uint64 {
	return uint64(C.go_cgo_spin(C.ulong(x), C.long(seconds)))
}

//go:noinline
func outer(x uint64, seconds int) uint64 {
	var pad [3]uint64
	pad[x%3] = x
	return callC(x+1, seconds) ^ pad[(x+1)%3]
}

func main() {
	seconds := 10
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			seconds = n
		}
	}
	fmt.Println("ready")
	fmt.Println(outer(uint64(seconds), seconds) & 1)
}
