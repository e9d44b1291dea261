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

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

func TestParseAckName(t *testing.T) {
	const (
		noDot  = "want <policy uid>.<generation>"
		badGen = "want <policy uid>.<generation>, with a generation of 1 or more"
	)
	for name, tc := range map[string]struct {
		uid     types.UID
		gen     int64
		wantErr string
	}{
		"3c9a4d1e-5b7f-4a8e-9d21-0f6b2c8e7a11.4": {uid: "3c9a4d1e-5b7f-4a8e-9d21-0f6b2c8e7a11", gen: 4},
		"a.b.12":                                 {uid: "a.b", gen: 12},
		"uid":                                    {wantErr: noDot},
		".7":                                     {wantErr: noDot},
		"uid.":                                   {wantErr: badGen},
		"uid.0":                                  {wantErr: badGen},
		"uid.-1":                                 {wantErr: badGen},
		"uid.x":                                  {wantErr: badGen},
	} {
		t.Run(name, func(t *testing.T) {
			uid, gen, err := parseAckName(name)
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.uid, uid)
			assert.Equal(t, tc.gen, gen)
		})
	}
}

func touch(t *testing.T, dir, name string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
}

func TestScanAcks(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "uid-a.1")
	touch(t, dir, "uid-a.3")
	touch(t, dir, "uid-a.2")
	touch(t, dir, "uid-b.1")
	touch(t, dir, ".uid-c.1.tmp") // being written
	touch(t, dir, "README")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "uid-d.1"), 0o755))

	acks, err := scanAcks(klog.Background(), dir)
	require.NoError(t, err)
	assert.Equal(t, ackSet{"uid-a": 3, "uid-b": 1}, acks)
	assert.True(t, acks.acknowledged(policyRef{UID: "uid-a", Generation: 3}))
	assert.True(t, acks.acknowledged(policyRef{UID: "uid-a", Generation: 2}))
	assert.False(t, acks.acknowledged(policyRef{UID: "uid-b", Generation: 2}))
	assert.False(t, acks.acknowledged(policyRef{UID: "uid-c", Generation: 1}))
}

func TestAckWatcherCreatesTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run", "acks")
	w, err := newAckWatcher(klog.Background(), dir, 0, func() {})
	require.NoError(t, err)
	assert.DirExists(t, dir)
	acks, untrusted := w.current()
	require.NoError(t, untrusted)
	assert.Empty(t, acks)

	file := filepath.Join(t.TempDir(), "file")
	touch(t, filepath.Dir(file), "file")
	_, err = newAckWatcher(klog.Background(), filepath.Join(file, "acks"), 0, func() {})
	assert.ErrorContains(t, err, "--ack-dir "+filepath.Join(file, "acks")+": mkdir "+file+": not a directory")
}

func TestAckWatcherReportsChangesAtOnce(t *testing.T) {
	dir := t.TempDir()
	changed := make(chan struct{}, 10)
	w, err := newAckWatcher(klog.Background(), dir, 0, func() { changed <- struct{}{} })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	// An agent writes a temporary file, then renames it into place.
	touch(t, dir, ".tmp")
	start := time.Now()
	require.NoError(t, os.Rename(filepath.Join(dir, ".tmp"), filepath.Join(dir, "uid-a.1")))
	select {
	case <-changed:
		t.Logf("acknowledgement noticed after %s", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("the new acknowledgement was not noticed")
	}
	acks, untrusted := w.current()
	require.NoError(t, untrusted)
	assert.Equal(t, ackSet{"uid-a": 1}, acks)

	// Removing an acknowledgement is a change too; a file that is not one
	// is not.
	require.NoError(t, os.Remove(filepath.Join(dir, "uid-a.1")))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the removal was not noticed")
	}
	acks, _ = w.current()
	assert.Empty(t, acks)
	touch(t, dir, "notes.txt")
	assert.Never(t, func() bool { return len(changed) > 0 }, 200*time.Millisecond, 10*time.Millisecond)
}
