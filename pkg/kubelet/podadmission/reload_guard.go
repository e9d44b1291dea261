package podadmission

import (
	"fmt"
	"strings"
	"time"
)

// settleWindow is how long a configuration file must stay removed before
// the plugins it listed are removed: installers that unlink a file and
// create it anew (install(1), some configuration management tools) are
// not removing anything, and a reload between the two steps must not drop
// its plugins. A configuration directory replaced as a whole (renamed or
// symlinked into place) needs no wait.
const settleWindow = 2 * time.Second

// A configuration is applied only once it is whole. A reload never reads a
// file that a process has open for writing (config_read.go), but a file
// can still be caught between two writes: rewritten in place with several
// open/write/close rounds, or by a writer that closes it before it is
// done. Every state such a file passes through is a prefix of what is
// being written, and a prefix of a configuration lists at most the plugins
// of the whole, some maybe without their last fields. So a change made in
// place (the same inode, new content) may add plugins but may not remove
// or change the plugins the file listed; that is refused as possibly half
// written. Changes that arrive as a new inode, renamed into place or by a
// ConfigMap's ..data symlink swap, are whole when they appear and are
// applied, whatever they remove. A file that lists "plugins: []" removes
// its plugins in place too: no prefix of a file with plugins reads so.

// inPlaceChangeError is a change made in place that would remove or
// change plugins of the configuration in use.
type inPlaceChangeError struct {
	file string
	// lost names the plugins of the file, as in use, that the new content
	// removes or changes.
	lost []string
}

func (e *inPlaceChangeError) Error() string {
	return fmt.Sprintf("%s: changed in place in a way that removes or changes its plugins [%s]; a file written in place can be read "+
		"half-written, so that is not applied. Write the new content to a file whose name starts with \".\" or does not end in "+
		".yaml, .yml or .json (it is not read), then rename it to %s; to remove every plugin of the file, write \"plugins: []\"; "+
		"or restart the kubelet", e.file, strings.Join(e.lost, ", "), e.file)
}

// guardReload decides whether next, a valid configuration just read, may
// replace current, the one in use. It returns an *inPlaceChangeError to
// refuse it, or a positive wait when files of current have been removed for
// less than settleWindow (by now): try again then.
func guardReload(current, next *Config, now time.Time) (time.Duration, error) {
	for i := range current.snapshot.files {
		old := &current.snapshot.files[i]
		changed, ok := next.snapshot.file(old.path)
		if !ok || !changed.stamp.sameFile(old.stamp) || changed.sum == old.sum || changed.explicitlyEmpty {
			continue
		}
		if lost := lostPlugins(old.plugins, changed.plugins); len(lost) > 0 {
			return 0, &inPlaceChangeError{file: old.path, lost: lost}
		}
	}

	var wait time.Duration
	snapshot := &current.snapshot
	if replaced(snapshot.dir, next.snapshot.dir) {
		// A new directory, renamed or symlinked into place: whole, and
		// what it lacks is removed on purpose.
		return 0, nil
	}
	for i := range snapshot.files {
		path := snapshot.files[i].path
		if _, ok := next.snapshot.file(path); ok {
			delete(snapshot.missingSince, path)
			continue
		}
		if snapshot.missingSince == nil {
			snapshot.missingSince = map[string]time.Time{}
		}
		since, ok := snapshot.missingSince[path]
		if !ok {
			since = now
			snapshot.missingSince[path] = now
		}
		if left := settleWindow - now.Sub(since); left > wait {
			wait = left
		}
	}
	return wait, nil
}

// replaced says whether the configuration directory is another one than
// before.
func replaced(before, after *fileStamp) bool {
	return before != nil && after != nil && !before.sameFile(*after)
}

// lostPlugins names the plugins of before that after does not list with
// the same configuration.
func lostPlugins(before, after []ConfiguredPlugin) []string {
	kept := map[string]*ConfiguredPlugin{}
	for i := range after {
		kept[after[i].Name] = &after[i]
	}
	var lost []string
	for i := range before {
		if p, ok := kept[before[i].Name]; !ok || !samePluginConfig(&p.PluginConfig, &before[i].PluginConfig) {
			lost = append(lost, before[i].Name)
		}
	}
	return lost
}
