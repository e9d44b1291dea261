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

package podadmission

import "time"

// settleWindow is how long a changed configuration must stay exactly as it
// is on disk before it is applied. What a reload sees may be a step of a
// write that is not done: a file written in place with several opens, or
// unlinked and created again, the directory removed and created anew, a
// directory renamed into place before the last file is copied into it.
// Nothing tells those steps from a finished change but that the writer
// stops. Tools write a configuration's files back to back: cp, install,
// rsync, tar and a configuration management agent on the node within
// milliseconds, Ansible one task, an SSH round trip or a few, per file,
// well within a second or two. 5 s covers them with room, and is what a
// deliberate change waits for (plus reloadDebounce): little, for a node's
// admission policy, whose last good configuration keeps deciding
// meanwhile. The one change applied without waiting is an atomic writer's
// symlink swap (config_swap.go), whole when it is seen; a writer that may
// pause longer between files should stage a directory and swap a symlink
// to it.
const settleWindow = 5 * time.Second

// pendingChange is a configuration found on disk that differs from the
// one in use, and since when the reloads have found it unchanged.
type pendingChange struct {
	config *Config
	since  time.Time
}

// settleLeft says how long next, valid and not the configuration in use,
// must still stay as it is before it may replace current: 0 once every
// reload for settleWindow up to now found the same content with the same
// stamps (a write in between, even one that restores the content, starts
// the wait anew), or when it was swapped in whole.
func (l *reloadLoop) settleLeft(current, next *Config, now time.Time) time.Duration {
	if swappedInWhole(&current.snapshot, &next.snapshot) {
		return 0
	}
	p := l.pending
	if p == nil || p.config.Hash != next.Hash || !p.config.snapshot.sameState(&next.snapshot) {
		p = &pendingChange{config: next, since: now}
		l.pending = p
	}
	return max(settleWindow-now.Sub(p.since), 0)
}
