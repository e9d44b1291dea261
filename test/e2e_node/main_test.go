//go:build e2e_node

// Package e2enode holds the node e2e tests: they run the drop-in kubelet
// against a real kube-apiserver, scheduler and controller manager (see
// package framework) and prove that pod admission plugins refuse pods
// without controllers thrashing. Run them with make test-e2e-node.
package e2enode

import (
	"os"
	"testing"

	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

var suite framework.Suite

// The cluster starts with a kubelet that needs nothing from the patch
// series; tests that need plugins restart it with what they need.
func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.KubeletOptions{}, &suite))
}
