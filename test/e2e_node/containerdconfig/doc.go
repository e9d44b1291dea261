// Package containerdconfig writes the containerd and CNI configuration of
// a node e2e run: containerd with a root, state, socket and CNI network of
// the run's own, off every default host path, so that it runs next to
// anything else on the machine and goes without trace.
//
// One source for both node e2e harnesses: the project's own
// (test/e2e_node/framework) renders it in process, upstream's suite
// (test/upstream-e2e/run.sh) through the containerd-config command
// (test/e2e_node/cmd/containerd-config).
package containerdconfig
