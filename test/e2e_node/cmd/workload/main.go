//go:build e2e_node

// Command workload is the container of the node e2e test pods in the
// containerd mode's local workload image: it says that it started, then
// idles until it is asked to stop, and exits 0.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	fmt.Printf("workload started at %s as pid %d\n", time.Now().Format(time.RFC3339Nano), os.Getpid())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	sig := <-signals
	fmt.Printf("workload stopping on %s\n", sig)
}
