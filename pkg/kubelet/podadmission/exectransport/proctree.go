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
	"strconv"
)

// When the plugin exits, the kernel makes the init of its PID namespace,
// the sentinel, the parent of every process the plugin left (there is no
// other ancestor in the namespace to inherit them), wherever they moved:
// another process group or session, another cgroup. So the processes a
// plugin left behind are the sentinel's descendants, and the sentinel,
// which never runs, has no other children. /proc lists a thread's children
// (/proc/<pid>/task/<tid>/children, CONFIG_PROC_CHILDREN, which CRIU needs
// and distribution kernels enable).

// errNoChildrenList is a kernel whose /proc lists no children.
var errNoChildrenList = errors.New("/proc lists no children of a process (a kernel without CONFIG_PROC_CHILDREN)")

// liveDescendants counts the processes below init, a single-threaded
// process, that have not exited: a zombie, which the sentinel never reaps,
// is not running. A process that exits during the count is not counted.
func liveDescendants(init int) (int, error) {
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", init, init))
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat(fmt.Sprintf("/proc/%d", init)); statErr == nil {
			return 0, errNoChildrenList
		}
	}
	if err != nil {
		return 0, err
	}
	// The usual case: the plugin left nothing.
	if len(bytes.TrimSpace(children)) == 0 {
		return 0, nil
	}
	seen := map[int]bool{init: true}
	pending := pidList(children)
	live := 0
	for len(pending) > 0 {
		pid := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if !running(pid) {
			continue
		}
		live++
		pending = append(pending, childrenOf(pid)...)
	}
	return live, nil
}

// childrenOf lists the children of every thread of pid; none if it is
// gone.
func childrenOf(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var children []int
	for _, task := range tasks {
		list, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err == nil {
			children = append(children, pidList(list)...)
		}
	}
	return children
}

// running says whether pid exists and is not a zombie: its state, the
// field after the command name in /proc/<pid>/stat, is not Z (or X).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 || end+2 >= len(stat) {
		return false
	}
	state := stat[end+2]
	return state != 'Z' && state != 'X'
}

// pidList parses a blank-separated list of pids.
func pidList(list []byte) []int {
	var pids []int
	for _, field := range bytes.Fields(list) {
		if pid, err := strconv.Atoi(string(field)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
