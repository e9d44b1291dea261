/*
Copyright The podadmission Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package exectransport

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"k8s.io/klog/v2"
)

// Every process a plugin call starts is gone when the call ends, whatever
// it did: a child that calls setsid(2), forks twice, daemonizes, moves
// itself into another cgroup or a cgroup below its own leaves its process
// group, its parent or its cgroup, but not its PID namespace. Each call
// runs in a container of its own, made of two parts:
//
//   - a PID namespace (pidns.go), whose init is a sentinel: when the
//     plugin exits, what it left running is counted among the sentinel's
//     descendants (proctree.go), wherever it moved, and that is an error
//     that fails the call closed; killing the sentinel then kills every
//     process of the call;
//   - a cgroup v2 child of the kubelet's own cgroup (cgroup.go), which the
//     plugin is born into (the sentinel stays in the kubelet's cgroup, so
//     that "populated 0" says the plugin left nothing there): cgroup.kill
//     kills what is in it and the cgroups below it, and the cgroups are
//     removed. Where /proc lists no children, the processes left in the
//     cgroup and below it are the ones counted.
//
// The kubelet needs cgroup v2 since v1.35 (failCgroupV1); where no cgroup
// can be made (a cgroup v1 host, a tool such as podadmctl run outside a
// kubelet's cgroup) calls run in their PID namespace only, counted the
// same way. If the PID namespace cannot be made, calls fail closed.

// container holds the processes of one call.
type container struct {
	// cgroup is the call's cgroup; nil where calls get none.
	cgroup *callCgroup
	// sentinel is the init of the call's PID namespace; nil when the
	// plugin is (sentinels refused).
	sentinel *sentinel
	// pluginPid is the plugin's process.
	pluginPid int
}

var (
	modeOnce sync.Once
	// cgroupParent is the kubelet's own cgroup directory; "" when calls
	// get no cgroup.
	cgroupParent string
	callSeq      atomic.Uint64
)

// forceNoCgroup makes calls run without a cgroup; tests set it to exercise
// the PID namespace alone on a host with cgroup v2. forceCgroupCount makes
// calls count what a plugin left in its cgroup, as where /proc lists no
// children.
var forceNoCgroup, forceCgroupCount atomic.Bool

// newContainer returns a container for one call of plugin.
func newContainer(plugin string) (*container, error) {
	modeOnce.Do(decideContainment)
	if cgroupParent == "" || forceNoCgroup.Load() {
		return &container{}, nil
	}
	cg, err := newCallCgroup(cgroupParent, plugin, callSeq.Add(1))
	if err != nil {
		return nil, err
	}
	return &container{cgroup: cg}, nil
}

// decideContainment uses cgroup v2 if a cgroup can be made under this
// process's own cgroup.
func decideContainment() {
	logger := klog.Background()
	parent, err := ownCgroupDir()
	if err == nil {
		sweepStaleCgroups(parent)
		probe := filepath.Join(parent, fmt.Sprintf("%s%d-probe", cgroupPrefix, os.Getpid()))
		if err = os.Mkdir(probe, 0o755); err == nil {
			_ = os.Remove(probe)
			cgroupParent = parent
			logger.V(2).Info("Exec pod admission plugins run each call in a cgroup and a PID namespace of its own", "parent", parent)
			return
		}
	}
	logger.Info("Cannot create cgroups for Exec pod admission plugin calls; each call runs in a PID namespace of its own only: processes a plugin leaves behind are killed when the call ends, but not reported",
		"err", err)
}

// start starts cmd, the plugin's process, in the container. run is how to
// execute the plugin's file (execfd.go), which the sentinel executes too.
func (c *container) start(cmd *exec.Cmd, run *execution) error {
	sys := &syscall.SysProcAttr{}
	if c.cgroup != nil {
		sys.UseCgroupFD, sys.CgroupFD = true, c.cgroup.fd
	}
	cmd.SysProcAttr = sys
	if useSentinels() {
		s, err := startSentinel(run.sentinelPath, run.sentinelFiles)
		if err != nil {
			return startError("the call's init", run, err)
		}
		c.sentinel = s
		if err := s.start(cmd); err != nil {
			return startError("the plugin", run, err)
		}
		c.pluginPid = cmd.Process.Pid
		return nil
	}
	// The plugin is the init of the namespace.
	sys.Cloneflags = syscall.CLONE_NEWPID
	if err := cmd.Start(); err != nil {
		return startError("the plugin", run, err)
	}
	c.pluginPid = cmd.Process.Pid
	return nil
}

// others counts the processes of the call still running other than the
// plugin's own, which has exited, and the sentinel: the sentinel's
// descendants, or where /proc does not list them, the processes in the
// call's cgroup and below it; -1 when they cannot be counted (the plugin
// is the namespace's init, or neither list can be read).
func (c *container) others() int {
	if c.sentinel == nil {
		return -1
	}
	if !forceCgroupCount.Load() {
		n, err := liveDescendants(c.sentinel.pid)
		if err == nil {
			return n
		}
		if !errors.Is(err, errNoChildrenList) {
			return -1
		}
	}
	if c.cgroup == nil {
		return -1
	}
	n, err := c.cgroup.count()
	if err != nil {
		return -1
	}
	return n
}

// kill kills every process of the call. Those in the call's cgroup are
// gone when it returns; the rest of the namespace is once the plugin's
// process is reaped and reap returns.
func (c *container) kill() error {
	switch {
	case c.sentinel != nil:
		c.sentinel.kill()
	case c.pluginPid > 0:
		// The plugin is the namespace's init.
		_ = syscall.Kill(c.pluginPid, syscall.SIGKILL)
	}
	if c.cgroup != nil {
		return c.cgroup.kill()
	}
	return nil
}

// reap waits, once the plugin's process is reaped, until every process of
// the call's PID namespace is gone.
func (c *container) reap() error {
	if c.sentinel == nil {
		return nil
	}
	return c.sentinel.reap()
}

// release frees the container; every process in it is gone.
func (c *container) release() {
	if c.sentinel != nil {
		c.sentinel.release()
	}
	if c.cgroup != nil {
		c.cgroup.release()
	}
}
