// build: go build -trimpath
// A cgo callback (C → Go): main.main -> main.callBack -> C's
// go_cgo_call_back -> the exported goBack -> main.backLeaf, which spins in
// Go. The callback runs on the goroutine's stack again (runtime.cgocallback),
// under a frame whose return address is the goroutine's g.sched.pc
// (runtime.systemstack_switch), then runtime.cgocall and the goroutine's
// root. (Apart from go_cgo, whose replay case stops in its C.)
// Usage: go_cgo_back SECONDS
package main

/*
// Declarations only: with //export below, cgo copies this preamble into two C
// files, so the one definition is static.
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
	fmt.Println("ready")
	fmt.Println(callBack(uint64(seconds), seconds) & 1)
}
