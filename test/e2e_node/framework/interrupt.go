//go:build e2e_node

package framework

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

// TearDownOnInterrupt runs down when the harness gets SIGINT (Ctrl-C),
// SIGTERM or SIGHUP, then exits with 128+signal. The components run in
// their own process groups, so a Ctrl-C reaches only the harness, which
// stops them in order. Further signals during teardown are ignored: an
// impatient second Ctrl-C must not leave mounts behind.
func TearDownOnInterrupt(down func()) {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "\n%s: tearing the cluster down, please wait\n", sig)
		klog.InfoS("Interrupted: tearing the cluster down", "signal", sig)
		go func() {
			for s := range signals {
				klog.InfoS("Still tearing down; ignoring signal", "signal", s)
			}
		}()
		down()
		klog.Flush()
		fmt.Fprintln(os.Stderr, "cluster is down")
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
}
