// A small program doing real CPU work in named functions: a CPU profile
// (runtime/pprof.StartCPUProfile) of two seconds of it, then a heap profile.
package main

import (
	"crypto/sha256"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"
)

var kept [][]int

//go:noinline
func hashLoop(n int) byte {
	var sum [32]byte
	buf := make([]byte, 4096)
	for i := 0; i < n; i++ {
		buf[i%4096] = byte(i)
		sum = sha256.Sum256(buf)
	}
	return sum[0]
}

//go:noinline
func sortLoop(n int) int {
	total := 0
	for i := 0; i < n; i++ {
		xs := make([]int, 2000)
		for j := range xs {
			xs[j] = (j*7919 + i) % 2003
		}
		sort.Ints(xs)
		total += xs[len(xs)/2]
		if i%50 == 0 {
			kept = append(kept, xs)
		}
	}
	return total
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var sink int
	for time.Now().Before(deadline) {
		sink += int(hashLoop(300))
		sink += sortLoop(100)
	}
	pprof.StopCPUProfile()
	f.Close()
	h, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(h); err != nil {
		panic(err)
	}
	h.Close()
	if sink == 42 {
		println(sink, len(kept))
	}
}
