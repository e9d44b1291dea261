//go:build e2e_node

package framework

import (
	"fmt"
	"net"
)

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago. Every port is picked at start-up rather than fixed, so the cluster
// does not collide with anything else on the machine.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
