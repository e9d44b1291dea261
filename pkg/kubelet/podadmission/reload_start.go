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

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// At start, the configuration on disk is compared with the record of the
// one last applied (applied_record.go), so that a configuration is applied
// only once it is whole across a kubelet restart and a power loss in the
// middle of a write too:
//
//   - the same configuration, or one that keeps every plugin of the last
//     applied one as it was (it may add plugins), is in use at once;
//   - one that removes or changes plugins is not: the last applied
//     configuration, which the record holds whole, is in use, and the one
//     on disk is a change like any change while running (reload.go): it
//     is applied once it stayed unchanged for settleWindow, and a change
//     in place that removes or changes plugins is refused
//     (reload_guard.go);
//   - and when it could be a write cut short, the way a power loss leaves
//     one that then never changes again, it is refused as long as the
//     configuration on disk stays exactly as found: a file whose plugins
//     are lost and that is now a prefix of the content last applied, or
//     removed. Any change of it (a touch is enough) makes it a change like
//     any other.
//
// A malformed configuration on disk stays a startup error: it is no
// configuration at all, whatever was applied before.

// cutShortError is a configuration on disk at start that removes or
// changes plugins of the one last applied and could be a write cut short.
type cutShortError struct {
	record string
	// why says, per file, how it could be cut short.
	why []string
	// touch is what to touch to apply it as it is.
	touch string
}

func (e *cutShortError) Error() string {
	return fmt.Sprintf("%s: this may be a write cut short by a power loss or a kubelet restart, so it is not applied and the configuration "+
		"last applied (recorded in %s) stays in use. To apply it, write it again, renaming complete files into place, or, if it is complete "+
		"as it is, touch %s: it is then applied once it stayed unchanged for %s", strings.Join(e.why, "; "), e.record, e.touch, settleWindow)
}

// distrustedConfig is a configuration on disk refused at start, in the
// state it was found in.
type distrustedConfig struct {
	snapshot configSnapshot
	err      error
}

// configAtStart returns the configuration NewManager starts with, given
// onDisk, the one read now. It reports one on disk that is not in use.
func (m *Manager) configAtStart(ctx context.Context, onDisk *Config) (*Config, error) {
	logger := klog.FromContext(ctx)
	last, err := m.applied.load(logger, m.opts.ConfigPath, m.opts.BinDir)
	if err != nil || last == nil {
		return onDisk, err
	}
	// As a reload would: a write in place that goes on keeps the base it
	// had when the record was written.
	refusal := guardReload(last, onDisk)
	lost := lostPlugins(last.Plugins, onDisk.Plugins)
	if last.Hash == onDisk.Hash || len(lost) == 0 && refusal == nil {
		return onDisk, nil
	}
	if refusal == nil {
		refusal = cutShort(m.applied.path, last, onDisk, lost)
	}
	if refusal != nil {
		m.distrusted = &distrustedConfig{snapshot: onDisk.snapshot, err: refusal}
		m.refuseReload(ctx, refusal)
		return last, nil
	}
	logger.Info("The pod admission configuration on disk removes or changes plugins of the one last applied; that stays in use until the change stayed unchanged for the settle window",
		"path", m.opts.ConfigPath, "record", m.applied.path, "plugins", lost, "settleWindow", settleWindow)
	m.recordNodeEvent(v1.EventTypeNormal, EventConfigSettling,
		"The pod admission configuration on disk removes or changes plugins [%s] of the one last applied; that stays in use until the change stayed unchanged for %s",
		strings.Join(lost, ", "), settleWindow)
	return last, nil
}

// cutShort returns a *cutShortError when onDisk, which loses the plugins
// lost of applied, could be a write cut short.
func cutShort(record string, applied, onDisk *Config, lost []string) error {
	e := &cutShortError{record: record, touch: applied.snapshot.path}
	for _, old := range applied.snapshot.files {
		var names []string
		for _, p := range old.plugins {
			if slices.Contains(lost, p.Name) {
				names = append(names, p.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		plugins := strings.Join(names, ", ")
		switch now, ok := onDisk.snapshot.file(old.path); {
		case !ok:
			e.why = append(e.why, fmt.Sprintf("%s: removed since it was last applied, with its plugins [%s]", old.path, plugins))
		case !now.explicitlyEmpty && len(now.data) < len(old.data) && bytes.HasPrefix(old.data, now.data):
			e.why = append(e.why, fmt.Sprintf("%s: the first %d of the %d bytes last applied, without its plugins [%s]", old.path, len(now.data), len(old.data), plugins))
			e.touch = old.path
		}
	}
	if len(e.why) == 0 {
		return nil
	}
	return e
}

// distrust returns the error of the configuration refused at start while
// cfg, just read, is still in the state it was refused in.
func (m *Manager) distrust(cfg *Config) error {
	if m.distrusted == nil {
		return nil
	}
	if !m.distrusted.snapshot.sameState(&cfg.snapshot) {
		m.distrusted = nil
		return nil
	}
	return m.distrusted.err
}
