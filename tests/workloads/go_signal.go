// build: go build -trimpath
// Samples inside Go's signal handler (runtime.sigtramp -> sigtrampgo ->
// sighandler, on the thread's gsignal stack): a goroutine locked to its
// thread spins in main.leaf under main.sigChain1 -> sigChain2 -> sigChain3,
// while another sends that thread SIGUSR1 (tgkill) as fast as it can, so
// a good part of the spinning thread's time goes to the handler, which the
// kernel enters through a signal frame on the gsignal stack and which
// returns through runtime.sigreturn__sigaction to the interrupted main.leaf.
// Usage: go_signal SECONDS
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

//go:noinline
func leaf(x uint64, stop *int32) uint64 {
	for {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if atomic.LoadInt32(stop) != 0 {
			return x
		}
	}
}

//go:noinline
func sigChain3(x uint64, stop *int32) uint64 { return leaf(x+3, stop) ^ 3 }

//go:noinline
func sigChain2(x uint64, stop *int32) uint64 { return sigChain3(x+2, stop) ^ 2 }

//go:noinline
func sigChain1(x uint64, stop *int32) uint64 { return sigChain2(x+1, stop) ^ 1 }

func spinner(tid chan<- int, stop *int32, done chan<- uint64) {
	runtime.LockOSThread()
	tid <- syscall.Gettid()
	done <- sigChain1(1, stop)
}

func main() {
	seconds := 10
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			seconds = n
		}
	}
	// Notified, so that SIGUSR1 runs the handler instead of ending the process;
	// what the channel cannot hold is dropped, the handler has run all the same.
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGUSR1)
	go func() {
		for range sigs {
		}
	}()
	var stop int32
	tidc := make(chan int)
	done := make(chan uint64)
	go spinner(tidc, &stop, done)
	tid := <-tidc
	pid := os.Getpid()
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	fmt.Println("ready")
	// Two senders: one alone left the handler a tenth of the spinner's time.
	sent := make(chan bool)
	for s := 0; s < 2; s++ {
		go func() {
			runtime.LockOSThread()
			for n := 0; ; n++ {
				syscall.Tgkill(pid, tid, syscall.SIGUSR1)
				if n%1024 == 0 && !time.Now().Before(deadline) {
					break
				}
			}
			sent <- true
		}()
	}
	<-sent
	<-sent
	atomic.StoreInt32(&stop, 1)
	fmt.Println(<-done & 1)
}
