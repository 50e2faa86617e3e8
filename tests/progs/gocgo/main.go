// SPDX-License-Identifier: BSD-2-Clause
// A Go program with cgo, for test_host.py: the Go runtime installs its own
// signal handlers (SIGPROF among them) and starts its threads through
// cgo's pthread_create, under libpc.so. Four goroutines share about 0.3 s
// of CPU work (a fixed amount), calling a tiny C function now and then;
// the program prints a checksum that is the same on every run and exits 0.
package main

/*
static unsigned int mix(unsigned int a, unsigned int b)
{
	return a * 2654435761u ^ b;
}
*/
import "C"

import (
	"fmt"
	"sync"
)

// work does steps of integer work, varied from call to call so that no
// period of it stays in phase with the kernel's tick.
func work(seed uint64, steps int) uint64 {
	x := seed
	for i := 0; i < steps; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func main() {
	const goroutines = 4
	var wg sync.WaitGroup
	sums := make([]uint64, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := uint64(g + 1)
			for i := 0; i < 2000; i++ {
				steps := 20000 + int(x>>40)%20000
				x = work(x, steps)
				x ^= uint64(C.mix(C.uint(x), C.uint(g)))
			}
			sums[g] = x
		}(g)
	}
	wg.Wait()
	var all uint64
	for _, s := range sums {
		all ^= s
	}
	fmt.Printf("goroutines done: %d, checksum %016x\n", goroutines, all)
}
