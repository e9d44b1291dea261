package exec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// Every process a plugin call starts is gone when the call ends, whatever
// it did: a child that calls setsid(2), forks twice or daemonizes leaves
// its process group and its parent, but not its cgroup or its PID
// namespace. Each call's process is started in a container of its own:
//
//   - a cgroup v2 child of the kubelet's own cgroup, which the plugin is
//     born into (clone3 CLONE_INTO_CGROUP). When the plugin exits, the
//     processes left in the cgroup are counted, and that is an error that
//     fails the call closed; then cgroup.kill kills all of them at once
//     and the cgroup is removed;
//   - where cgroup v2 is not usable (no unified hierarchy, no permission to
//     create a cgroup), a PID namespace of which the plugin is the init:
//     when it exits or is killed, the kernel kills every process left in
//     the namespace. Those are not counted, so leaving some is no error.
//
// The kubelet needs cgroup v2 since v1.35 (failCgroupV1), so the fallback
// is for tools such as podadmctl run outside a kubelet's cgroup. If neither
// works, calls fail closed.

// containment is how one call's processes are held together.
type containment interface {
	// prepare sets up cmd, before it starts, to start inside.
	prepare(cmd *exec.Cmd)
	// started records the pid of the plugin's process.
	started(pid int)
	// others counts the processes inside other than the plugin's own,
	// which has exited; -1 when they cannot be counted.
	others() int
	// kill kills every process inside and waits until they are gone.
	kill() error
	// release frees the container; every process inside is gone.
	release()
}

// containmentMode is how calls are contained on this host, decided at the
// first call.
type containmentMode int

const (
	containByCgroup containmentMode = iota
	containByPIDNamespace
)

var (
	modeOnce sync.Once
	mode     containmentMode
	// cgroupParent is the kubelet's own cgroup directory, in cgroup mode.
	cgroupParent string
	callSeq      atomic.Uint64
)

// forcePIDNamespace makes calls use the PID namespace fallback; tests set
// it to exercise the fallback on a host with cgroup v2.
var forcePIDNamespace atomic.Bool

// newContainment returns a container for one call of plugin.
func newContainment(plugin string) (containment, error) {
	modeOnce.Do(decideContainment)
	if mode == containByCgroup && !forcePIDNamespace.Load() {
		return newCgroupContainment(plugin)
	}
	return &pidNamespaceContainment{}, nil
}

// decideContainment uses cgroup v2 if a cgroup can be made under this
// process's own cgroup, and says which containment calls get.
func decideContainment() {
	logger := klog.Background()
	parent, err := ownCgroupDir()
	if err == nil {
		sweepStaleCgroups(parent)
		probe := filepath.Join(parent, fmt.Sprintf("pod-admission-%d-probe", os.Getpid()))
		if err = os.Mkdir(probe, 0o755); err == nil {
			_ = os.Remove(probe)
			mode, cgroupParent = containByCgroup, parent
			logger.V(2).Info("Exec pod admission plugins run each call in a cgroup of its own", "parent", parent)
			return
		}
	}
	mode = containByPIDNamespace
	logger.Info("Cannot create cgroups for Exec pod admission plugin calls; each call runs in a PID namespace of its own instead: processes a plugin leaves behind are killed when it exits, but not reported",
		"err", err)
}

// sweepStaleCgroups kills what is left in, and removes, the call cgroups
// of earlier processes (a kubelet that crashed during a call), whose names
// carry their pid.
func sweepStaleCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "pod-admission-")
		if !ok || !e.IsDir() {
			continue
		}
		owner, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(owner)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // another live process's calls
		}
		stale := &cgroupContainment{dir: filepath.Join(parent, e.Name()), fd: -1}
		if err := stale.kill(); err == nil {
			_ = os.Remove(stale.dir)
		}
	}
}

// ownCgroupDir returns the directory of this process's cgroup in the cgroup
// v2 hierarchy.
func ownCgroupDir() (string, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var path string
	for _, line := range strings.Split(string(self), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			path = rest
		}
	}
	if path == "" {
		return "", errors.New("this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")
	}
	root, mountpoint, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	rel, ok := strings.CutPrefix(path, root)
	if !ok {
		return "", fmt.Errorf("cgroup %s is outside the mounted cgroup2 root %s", path, root)
	}
	return filepath.Join(mountpoint, rel), nil
}

// cgroup2Mount returns the root and mount point of the cgroup2 mount.
func cgroup2Mount() (root, mountpoint string, err error) {
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup2"))
	if err != nil {
		return "", "", err
	}
	if len(mounts) == 0 {
		return "", "", errors.New("no cgroup2 file system is mounted")
	}
	return mounts[0].Root, mounts[0].Mountpoint, nil
}

// cgroupContainment is a cgroup v2 directory of one call.
type cgroupContainment struct {
	dir string
	fd  int
}

func newCgroupContainment(plugin string) (*cgroupContainment, error) {
	dir := filepath.Join(cgroupParent, fmt.Sprintf("pod-admission-%d-%d-%s", os.Getpid(), callSeq.Add(1), plugin))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the call's cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("cannot open the call's cgroup: %w", err)
	}
	return &cgroupContainment{dir: dir, fd: fd}, nil
}

func (c *cgroupContainment) prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: c.fd}
}

func (c *cgroupContainment) started(int) {}

// others counts the processes in the cgroup: the plugin's own process has
// exited, and an exited process is no longer listed.
func (c *cgroupContainment) others() int {
	procs, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return -1
	}
	return len(bytes.Fields(procs))
}

// maxKillWait bounds the wait for killed processes to be gone; a process in
// uninterruptible sleep (a hung NFS mount) can take longer.
const maxKillWait = 5 * time.Second

func (c *cgroupContainment) kill() error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		// Before Linux 5.14: kill what is listed until nothing is.
		if err := c.killListed(); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(maxKillWait)
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		if c.empty() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of the call's cgroup %s still running %s after they were killed", c.dir, maxKillWait)
		}
		time.Sleep(wait)
	}
}

func (c *cgroupContainment) killListed() error {
	for range 100 {
		procs, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
		if err != nil {
			return err
		}
		pids := bytes.Fields(procs)
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(string(p)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("processes of the call's cgroup %s keep appearing", c.dir)
}

// empty says whether no process is left in the cgroup.
func (c *cgroupContainment) empty() bool {
	events, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return c.others() == 0
	}
	return bytes.Contains(events, []byte("populated 0"))
}

func (c *cgroupContainment) release() {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
	}
	if err := os.Remove(c.dir); err != nil {
		klog.Background().Error(err, "Cannot remove the cgroup of an Exec pod admission plugin call", "cgroup", c.dir)
	}
}

// pidNamespaceContainment runs the plugin as the init of a new PID
// namespace.
type pidNamespaceContainment struct {
	pid int
}

func (c *pidNamespaceContainment) prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
}

func (c *pidNamespaceContainment) started(pid int) { c.pid = pid }

// others cannot count: the kernel killed the namespace's other processes
// when its init, the plugin, exited.
func (c *pidNamespaceContainment) others() int { return -1 }

// kill kills the namespace's init, and with it, the kernel kills the rest.
func (c *pidNamespaceContainment) kill() error {
	if c.pid > 0 {
		_ = syscall.Kill(c.pid, syscall.SIGKILL)
	}
	return nil
}

func (c *pidNamespaceContainment) release() {}
