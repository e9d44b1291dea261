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
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// A call's cgroup is a cgroup v2 child of the kubelet's own cgroup, which
// the call's processes are born into (clone3 CLONE_INTO_CGROUP). A
// process in it may make sub-cgroups and move into them; they are part of
// the call: counted, killed (cgroup.kill is recursive) and removed.

// callCgroup is the cgroup v2 directory of one call.
type callCgroup struct {
	dir string
	fd  int
}

// cgroupPrefix starts the names of call cgroups; the kubelet's pid and a
// sequence number follow, then the plugin's name.
const cgroupPrefix = "pod-admission-"

func newCallCgroup(parent, plugin string, seq uint64) (*callCgroup, error) {
	dir := filepath.Join(parent, fmt.Sprintf("%s%d-%d-%s", cgroupPrefix, os.Getpid(), seq, plugin))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the call's cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("cannot open the call's cgroup: %w", err)
	}
	return &callCgroup{dir: dir, fd: fd}, nil
}

// count counts the processes in the cgroup and every cgroup below it. An
// exited process is not counted.
func (c *callCgroup) count() (int, error) {
	if c.empty() {
		return 0, nil
	}
	pids, err := c.pids()
	return len(pids), err
}

// pids lists the processes in the cgroup and every cgroup below it. An
// exited process is no longer listed.
func (c *callCgroup) pids() ([]int, error) {
	var pids []int
	err := walkCgroups(c.dir, func(dir string) error {
		procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return err
		}
		pids = append(pids, pidList(procs)...)
		return nil
	})
	return pids, err
}

// walkCgroups calls visit for dir and every cgroup below it, parents
// first. A cgroup removed during the walk is skipped.
func walkCgroups(dir string, visit func(dir string) error) error {
	if err := visit(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := walkCgroups(filepath.Join(dir, e.Name()), visit); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxKillWait bounds the wait for killed processes to be gone; a process in
// uninterruptible sleep (a hung NFS mount) can take longer.
const maxKillWait = 5 * time.Second

// kill kills every process in the cgroup and below, and waits until they
// are gone.
func (c *callCgroup) kill() error {
	if c.empty() {
		return nil
	}
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		// Before Linux 5.14: kill what is listed until nothing is.
		if err := c.killListed(); err != nil {
			return err
		}
	}
	if !waitFor(c.empty, maxKillWait) {
		return fmt.Errorf("processes of the call's cgroup %s still running %s after they were killed", c.dir, maxKillWait)
	}
	return nil
}

func (c *callCgroup) killListed() error {
	for range 100 {
		pids, err := c.pids()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("processes of the call's cgroup %s keep appearing", c.dir)
}

// empty says whether no process is left in the cgroup or below it: one
// read of cgroup.events, whose "populated" covers the cgroups below.
func (c *callCgroup) empty() bool {
	events, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		pids, err := c.pids()
		return err == nil && len(pids) == 0
	}
	return bytes.Contains(events, []byte("populated 0"))
}

// waitFor polls done, more and more slowly, until it is true or limit has
// passed; it says whether done became true.
func waitFor(done func() bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}

// release removes the cgroup and every cgroup below it; no process is left
// in them.
func (c *callCgroup) release() {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
	// The usual case: no cgroup below it.
	if err := unix.Rmdir(c.dir); err == nil || errors.Is(err, unix.ENOENT) {
		return
	}
	if err := removeCgroupTree(c.dir); err != nil {
		klog.Background().Error(err, "Cannot remove the cgroup of an Exec pod admission plugin call", "cgroup", c.dir)
	}
}

// removeCgroupTree removes dir and the cgroups below it, children first: a
// cgroup with children cannot be removed (EBUSY).
func removeCgroupTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, removeCgroupTree(filepath.Join(dir, e.Name())))
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
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
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
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
		stale := &callCgroup{dir: filepath.Join(parent, e.Name()), fd: -1}
		if err := stale.kill(); err == nil {
			stale.release()
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
