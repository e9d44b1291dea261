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
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KubeletCgroupRoot is the kubelet's cgroupRoot: it makes its QoS
// hierarchy (kubepods, kubepods/burstable, kubepods/besteffort) and the
// pods' cgroups below it, in every hierarchy, and enforces node
// allocatable on kubepods there; nothing of the machine's cgroups outside
// it changes. The harness creates it before the kubelet starts (the
// kubelet refuses a cgroupRoot that does not exist) and teardown removes
// it, also after a run killed with SIGKILL.
const KubeletCgroupRoot = "/podadmission-e2e"

// cgroupMount is one mounted cgroup hierarchy: a v1 hierarchy (cpu,
// memory, pids, name=systemd, ...) or the unified v2 one.
type cgroupMount struct {
	Path string
	V2   bool
}

// cgroupMounts lists the machine's cgroup hierarchies from mountinfo: on
// this cgroup v1 (hybrid) host, one per v1 controller and the unified
// hierarchy at /sys/fs/cgroup/unified; on a cgroup v2 host, only
// /sys/fs/cgroup.
func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []cgroupMount
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(scanner.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || sep+1 >= len(fields) {
			continue
		}
		switch fields[sep+1] {
		case "cgroup":
			mounts = append(mounts, cgroupMount{Path: unescapeMountPath(fields[4])})
		case "cgroup2":
			mounts = append(mounts, cgroupMount{Path: unescapeMountPath(fields[4]), V2: true})
		}
	}
	return mounts, scanner.Err()
}

// kubeletCgroupRootDirs is KubeletCgroupRoot in every hierarchy.
func kubeletCgroupRootDirs() []string {
	mounts, _ := cgroupMounts()
	dirs := make([]string, 0, len(mounts))
	for _, m := range mounts {
		dirs = append(dirs, filepath.Join(m.Path, KubeletCgroupRoot))
	}
	return dirs
}

// createKubeletCgroupRoot creates KubeletCgroupRoot in every hierarchy.
// A new v1 cpuset cgroup has no CPUs and no memory nodes, and no task can
// join it or its children, so it gets its parent's.
func createKubeletCgroupRoot() error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	if len(mounts) == 0 {
		return errors.New("no cgroup hierarchy is mounted (/proc/self/mountinfo)")
	}
	for _, m := range mounts {
		dir := filepath.Join(m.Path, KubeletCgroupRoot)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating the kubelet's cgroup root: %w", err)
		}
		if m.V2 {
			continue
		}
		for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(m.Path, file))
			if errors.Is(err, fs.ErrNotExist) {
				break // not the cpuset hierarchy
			} else if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, file), parent, 0o644); err != nil {
				return fmt.Errorf("copying %s into the kubelet's cgroup root: %w", file, err)
			}
		}
	}
	return nil
}

// QoSCgroupParent is the cgroup, relative to a hierarchy, that the kubelet
// (cgroupfs driver, cgroupsPerQOS) puts the pods of a QoS class in.
func QoSCgroupParent(class corev1.PodQOSClass) string {
	switch class {
	case corev1.PodQOSGuaranteed:
		return filepath.Join(KubeletCgroupRoot, "kubepods")
	case corev1.PodQOSBurstable:
		return filepath.Join(KubeletCgroupRoot, "kubepods", "burstable")
	default:
		return filepath.Join(KubeletCgroupRoot, "kubepods", "besteffort")
	}
}

// PodCgroups lists the cgroups of the pod with uid, in every hierarchy:
// the cgroupfs driver names them pod<uid>, wherever they are below
// KubeletCgroupRoot. Empty means the pod has no cgroup on the node.
func PodCgroups(uid types.UID) ([]string, error) {
	name := "pod" + string(uid)
	var found []string
	for _, root := range kubeletCgroupRootDirs() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() && d.Name() == name {
				found = append(found, path)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// CheckPodCgroups checks that the pod has a cgroup under its QoS class's
// parent in every hierarchy where the kubelet made that parent, and none
// anywhere else.
func CheckPodCgroups(pod *corev1.Pod) error {
	found, err := PodCgroups(pod.UID)
	if err != nil {
		return err
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	parent := QoSCgroupParent(pod.Status.QOSClass)
	var want []string
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m.Path, parent)); err == nil {
			want = append(want, filepath.Join(m.Path, parent, "pod"+string(pod.UID)))
		}
	}
	if len(want) == 0 {
		return fmt.Errorf("no hierarchy has the QoS parent %s of pod %s/%s (QoS class %q)", parent, pod.Namespace, pod.Name, pod.Status.QOSClass)
	}
	slices.Sort(found)
	slices.Sort(want)
	if !slices.Equal(found, want) {
		return fmt.Errorf("pod %s/%s (QoS class %s): cgroups %v, want %v", pod.Namespace, pod.Name, pod.Status.QOSClass, found, want)
	}
	return nil
}

// BurstableCPUShares is the CPU weight the kubelet gave the burstable QoS
// cgroup, as cgroup v1 cpu.shares: the kubelet sets it from the sum of the
// CPU requests of the burstable pods it counts as active (a cgroup v2
// cpu.weight is converted back the way the kubelet converts shares to it).
func BurstableCPUShares() (uint64, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return 0, err
	}
	parent := QoSCgroupParent(corev1.PodQOSBurstable)
	for _, m := range mounts {
		file := "cpu.shares"
		if m.V2 {
			file = "cpu.weight"
		}
		data, err := os.ReadFile(filepath.Join(m.Path, parent, file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return 0, err
		}
		var value uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(string(data)), "%d", &value); err != nil {
			return 0, fmt.Errorf("%s: %w", filepath.Join(m.Path, parent, file), err)
		}
		if m.V2 {
			// The inverse of the kubelet's CpuSharesToCpuWeight:
			// weight = 1 + (shares-2)*9999/262142.
			return 2 + (value-1)*262142/9999, nil
		}
		return value, nil
	}
	return 0, fmt.Errorf("no hierarchy has %s/cpu.shares or cpu.weight", parent)
}

// MilliCPUToShares is the kubelet's conversion of CPU requests to cgroup v1
// cpu.shares (at least 2).
func MilliCPUToShares(milliCPU int64) uint64 {
	shares := uint64(milliCPU) * 1024 / 1000
	if shares < 2 {
		return 2
	}
	return shares
}
