package exec

import "testing"

// ForcePIDNamespace makes the calls of the test use the PID namespace
// containment, the fallback for hosts without usable cgroup v2.
func ForcePIDNamespace(t testing.TB) {
	forcePIDNamespace.Store(true)
	t.Cleanup(func() { forcePIDNamespace.Store(false) })
}

// CgroupParent is the cgroup that holds the calls' cgroups, "" when calls
// do not run in cgroups.
func CgroupParent() string {
	modeOnce.Do(decideContainment)
	if mode != containByCgroup {
		return ""
	}
	return cgroupParent
}

// SweepStaleCgroups runs the sweep of call cgroups that processes now gone
// left behind.
func SweepStaleCgroups(parent string) { sweepStaleCgroups(parent) }
