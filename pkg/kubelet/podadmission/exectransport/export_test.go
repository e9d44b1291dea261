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

import "testing"

// ForceNoCgroup makes the calls of the test run in their PID namespace
// only, as on a host where no cgroup v2 can be made for them.
func ForceNoCgroup(t testing.TB) {
	forceNoCgroup.Store(true)
	t.Cleanup(func() { forceNoCgroup.Store(false) })
}

// ForceCgroupCount makes the calls of the test count what their plugin
// left in its cgroup, as on a kernel whose /proc lists no children.
func ForceCgroupCount(t testing.TB) {
	forceCgroupCount.Store(true)
	t.Cleanup(func() { forceCgroupCount.Store(false) })
}

// ForceNoSentinel makes each plugin of the test the init of its call's PID
// namespace, as on a host that refuses ptrace.
func ForceNoSentinel(t testing.TB) {
	useSentinels()
	sentinelsMu.Lock()
	was := sentinelsUnavailable
	sentinelsUnavailable = true
	sentinelsMu.Unlock()
	t.Cleanup(func() {
		sentinelsMu.Lock()
		sentinelsUnavailable = was
		sentinelsMu.Unlock()
	})
}

// CgroupParent is the cgroup that holds the calls' cgroups, "" when calls
// do not run in cgroups.
func CgroupParent() string {
	modeOnce.Do(decideContainment)
	return cgroupParent
}

// SweepStaleCgroups runs the sweep of call cgroups that processes now gone
// left behind.
func SweepStaleCgroups(parent string) { sweepStaleCgroups(parent) }

// CgroupMount is where the cgroup2 file system is mounted, "" when it is
// not.
func CgroupMount() string {
	_, mountpoint, err := cgroup2Mount()
	if err != nil {
		return ""
	}
	return mountpoint
}
