// build: go build -trimpath
// cgo, both ways, on two threads at once:
//  - Go → C: main.main -> main.outer -> main.callC -> C's go_cgo_spin ->
//    go_cgo_leaf, which spins on the CPU. The C code runs on the thread's
//    system stack (g0): runtime.cgocall switches there in runtime.asmcgocall,
//    so the walk from C back to Go goes through a Go stack switch.
//  - Go → C → Go: a goroutine's main.callBack -> C's go_cgo_call_back ->
//    the exported goBack -> main.backLeaf, which spins in Go. The callback
//    runs on the goroutine's stack again (runtime.cgocallback), under a frame
//    whose return address is runtime.systemstack_switch, then runtime.cgocall.
// Usage: go_cgo SECONDS
package main

/*
#include <time.h>

// Definitions are static: with //export below, cgo copies this preamble into two C files.
static __attribute__((noinline)) unsigned long go_cgo_leaf(unsigned long x, long seconds)
{
	time_t end = time(NULL) + seconds;

	while (time(NULL) < end)
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static __attribute__((noinline)) unsigned long go_cgo_spin(unsigned long x, long seconds)
{
	return go_cgo_leaf(x, seconds) + 1;
}

extern unsigned long goBack(unsigned long x, long seconds);

static __attribute__((noinline)) unsigned long go_cgo_call_back(unsigned long x, long seconds)
{
	return goBack(x, seconds) + 1;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
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

//export goBack
func goBack(x C.ulong, seconds C.long) C.ulong {
	return C.ulong(backLeaf(uint64(x), int(seconds)))
}

//go:noinline
func backLeaf(x uint64, seconds int) uint64 {
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	for time.Now().Before(end) {
		for i := 0; i < 1000000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

//go:noinline
func callBack(x uint64, seconds int) uint64 {
	return uint64(C.go_cgo_call_back(C.ulong(x), C.long(seconds)))
}

func main() {
	seconds := 10
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			seconds = n
		}
	}
	done := make(chan uint64)
	go func() { done <- callBack(uint64(seconds), seconds) }()
	fmt.Println("ready")
	fmt.Println((outer(uint64(seconds), seconds) ^ <-done) & 1)
}
