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
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times; 100 on Linux
// for every architecture this runs on.
const clockTicks = 100

// CPUTimes is the CPU a process has used so far.
type CPUTimes struct {
	// Self is user plus system time of the process itself.
	Self time.Duration
	// Children is user plus system time of its children that it has
	// waited for, e.g. the kubelet's Exec plugin processes.
	Children time.Duration
}

// ProcessCPU reads the CPU times of pid from /proc.
func ProcessCPU(pid int) (CPUTimes, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return CPUTimes{}, err
	}
	// Fields after the parenthesised command name; utime is field 14 of
	// the whole line, i.e. index 11 here.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return CPUTimes{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 15 {
		return CPUTimes{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	ticks := make([]int64, 4)
	for j := range ticks {
		if ticks[j], err = strconv.ParseInt(string(fields[11+j]), 10, 64); err != nil {
			return CPUTimes{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	toDuration := func(t int64) time.Duration { return time.Duration(t) * time.Second / clockTicks }
	return CPUTimes{Self: toDuration(ticks[0] + ticks[1]), Children: toDuration(ticks[2] + ticks[3])}, nil
}

// Sub is the CPU used between before and t.
func (t CPUTimes) Sub(before CPUTimes) CPUTimes {
	return CPUTimes{Self: t.Self - before.Self, Children: t.Children - before.Children}
}
