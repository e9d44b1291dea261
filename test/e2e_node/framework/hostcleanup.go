//go:build e2e_node

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

package framework

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// fixedHostPaths are the machine-wide paths the kubelet, containerd or the
// CNI plugins may create whatever the harness configures. Teardown removes
// those that did not exist before the run.
var fixedHostPaths = []string{
	"/var/lib/kubelet/device-plugins",
	"/var/lib/kubelet",
	"/var/log/containers",
	"/var/log/pods",
	"/run/containerd",
	"/var/lib/containerd",
	"/opt/containerd",
	"/run/netns",
	"/var/lib/cni",
	"/etc/cni",
	"/opt/cni",
	"/etc/kubernetes",
	"/run/kubernetes",
	"/usr/libexec/kubernetes",
}

// cgroupNames are the cgroups, directly under each hierarchy's root, that
// the kubelet or containerd would create with another node configuration
// (no cgroupRoot, or the systemd driver); a run removes those it created.
// KubeletCgroupRoot is always the run's, and always removed.
var cgroupNames = []string{"k8s.io", "kubepods", "kubepods.slice", "kubelet", "kubelet.slice"}

const cgroupRoot = "/sys/fs/cgroup"

// hostSnapshot is the state of the machine before the run, saved in the
// state directory so that the teardown of a run that died can use it too.
type hostSnapshot struct {
	// Existing lists the fixed host paths and cgroups present at start.
	Existing map[string]bool `json:"existing"`
}

func snapshotPath() string { return filepath.Join(StateRoot, "host-snapshot.json") }

func takeHostSnapshot() (*hostSnapshot, error) {
	s := &hostSnapshot{Existing: map[string]bool{}}
	for _, p := range append(slices.Clone(fixedHostPaths), cgroupDirs()...) {
		if _, err := os.Lstat(p); err == nil {
			s.Existing[p] = true
		}
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return s, os.WriteFile(snapshotPath(), data, 0o644)
}

func loadHostSnapshot() (*hostSnapshot, error) {
	data, err := os.ReadFile(snapshotPath())
	if err != nil {
		return nil, err
	}
	s := &hostSnapshot{}
	return s, json.Unmarshal(data, s)
}

// cgroupDirs lists the candidate pod cgroups in every mounted hierarchy.
func cgroupDirs() []string {
	entries, err := os.ReadDir(cgroupRoot)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, name := range cgroupNames {
			dirs = append(dirs, filepath.Join(cgroupRoot, e.Name(), name))
		}
	}
	return dirs
}

// cleanupHost removes everything a run leaves on the machine: processes,
// mounts, cgroups, the CNI bridge, fixed host paths that did not exist
// before (per snapshot; nil keeps every fixed path) and the state and
// socket directories. It is idempotent and safe after a crash.
func cleanupHost(snapshot *hostSnapshot) error {
	start := time.Now()
	existed := func(p string) bool { return snapshot == nil || snapshot.Existing[p] }
	var errs []error

	ours := []string{StateRoot, SocketRoot}
	ourCgroups := kubeletCgroupRootDirs()
	for _, dir := range cgroupDirs() {
		if !existed(dir) {
			ourCgroups = append(ourCgroups, dir)
		}
	}
	if err := killProcesses(ours, ourCgroups); err != nil {
		errs = append(errs, err)
	}

	mountRoots := slices.Clone(ours)
	for _, p := range fixedHostPaths {
		if !existed(p) {
			mountRoots = append(mountRoots, p)
		}
	}
	if err := unmountUnder(mountRoots); err != nil {
		errs = append(errs, err)
	}
	for _, dir := range ourCgroups {
		if err := removeCgroup(dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := deleteLink(cniBridgeName); err != nil {
		errs = append(errs, err)
	}
	if err := removeContainerLogLinks(); err != nil {
		errs = append(errs, err)
	}
	for _, p := range fixedHostPaths {
		if !existed(p) {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, p := range ours {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	if left := leftovers(); len(left) > 0 {
		errs = append(errs, fmt.Errorf("left behind: %s", strings.Join(left, "; ")))
	}
	klog.InfoS("Host cleaned up", "took", time.Since(start).Round(time.Millisecond), "errors", len(errs))
	return errors.Join(errs...)
}

// leftovers lists what of a run is still on the machine: its directories,
// processes, mounts and the CNI bridge.
func leftovers() []string {
	var left []string
	for _, dir := range []string{StateRoot, SocketRoot} {
		if _, err := os.Lstat(dir); err == nil {
			left = append(left, "directory "+dir)
		}
	}
	for _, pid := range ourProcesses([]string{StateRoot, SocketRoot}, nil) {
		left = append(left, fmt.Sprintf("process %d (%s)", pid, strings.TrimSpace(cmdline(pid))))
	}
	if points, err := mountPointsUnder([]string{StateRoot, SocketRoot}); err == nil {
		for _, mp := range points {
			left = append(left, "mount "+mp)
		}
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", cniBridgeName)); err == nil {
		left = append(left, "network link "+cniBridgeName)
	}
	for _, dir := range kubeletCgroupRootDirs() {
		if _, err := os.Lstat(dir); err == nil {
			left = append(left, "cgroup "+dir)
		}
	}
	return left
}

// killProcesses kills every process whose command line names one of the
// run's directories (every component, plugin daemon and containerd shim
// does) or that lives in one of the run's cgroups (container processes),
// and waits until they are gone.
func killProcesses(dirs, cgroups []string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		pids := ourProcesses(dirs, cgroups)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes still alive after SIGKILL: %v", pids)
		}
		for _, pid := range pids {
			klog.V(2).InfoS("Killing leftover process", "pid", pid, "cmdline", cmdline(pid))
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ourProcesses(dirs, cgroups []string) []int {
	self := os.Getpid()
	seen := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmd := cmdline(pid)
		for _, d := range dirs {
			if strings.Contains(cmd, d) {
				seen[pid] = true
			}
		}
	}
	for _, cg := range cgroups {
		_ = filepath.WalkDir(cg, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(path)
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && pid != self {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	// A zombie (state Z) is dead already; its parent reaps it.
	var pids []int
	for pid := range seen {
		if !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

func cmdline(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return string(bytes.ReplaceAll(data, []byte{0}, []byte{' '}))
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z'
}

// unmountUnder unmounts every mount point at or below one of roots,
// deepest first (the kubelet bind-mounts its root dir onto itself, and
// containerd mounts rootfs, shm and network namespaces below its state).
func unmountUnder(roots []string) error {
	var errs []error
	for range 5 {
		points, err := mountPointsUnder(roots)
		if err != nil {
			return err
		}
		if len(points) == 0 {
			return nil
		}
		errs = nil
		for _, mp := range points {
			if err := unix.Unmount(mp, 0); err != nil {
				// Busy: detach it, it goes once the last user does.
				if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
					errs = append(errs, fmt.Errorf("unmounting %s: %w", mp, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// mountPointsUnder reads /proc/self/mountinfo; deepest mount points first.
func mountPointsUnder(roots []string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountPath(fields[4])
		for _, root := range roots {
			if mp == root || strings.HasPrefix(mp, root+"/") {
				points = append(points, mp)
				break
			}
		}
	}
	slices.SortFunc(points, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return slices.Compact(points), nil
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeCgroup removes a cgroup and its children, deepest first; cgroupfs
// only allows rmdir of empty cgroups, and a cgroup whose last task has
// just been killed is busy for a moment.
func removeCgroup(dir string) error {
	var err error
	for range 50 {
		if err = removeCgroupOnce(dir); err == nil || !errors.Is(err, unix.EBUSY) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func removeCgroupOnce(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var errs []error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dirs[i], err))
		}
	}
	return errors.Join(errs...)
}

// deleteLink deletes a network interface if it exists.
func deleteLink(name string) error {
	if _, err := os.Stat(filepath.Join("/sys/class/net", name)); err != nil {
		return nil
	}
	out, err := exec.Command("ip", "link", "delete", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip link delete %s: %w: %s", name, err, out)
	}
	return nil
}

// removeContainerLogLinks removes the kubelet's symlinks in the fixed
// /var/log/containers that point into the run's state directory, for the
// case the directory existed before the run.
func removeContainerLogLinks() error {
	entries, err := os.ReadDir("/var/log/containers")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join("/var/log/containers", e.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, StateRoot+"/") {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}
