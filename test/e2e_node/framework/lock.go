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
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// machineLock makes sure only one node e2e cluster runs on the machine:
// the kubelet writes fixed host paths, and two would share them.
type machineLock struct {
	file *os.File
}

// acquireMachineLock takes the lock, waiting up to wait for another run to
// finish, or until ctx ends.
func acquireMachineLock(ctx context.Context, wait time.Duration) (*machineLock, error) {
	deadline := time.Now().Add(wait)
	logged := false
	for {
		l, holder, err := tryMachineLock()
		if err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
			return l, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another node e2e run holds %s (%s); only one may run per machine (waited %s)", lockPath, holder, wait)
		}
		if !logged {
			klog.InfoS("Waiting for another node e2e run to finish", "lock", lockPath, "holder", holder, "upTo", wait)
			logged = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the machine lock: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func tryMachineLock() (*machineLock, string, error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, "", err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(lockPath)
		f.Close()
		return nil, strings.TrimSpace(string(holder)), err
	}
	// The previous holder removes the file before unlocking; if it did so
	// after we opened it, we hold a lock on a deleted file: start again.
	if info, err := os.Stat(lockPath); err != nil || !os.SameFile(info, mustStat(f)) {
		f.Close()
		return nil, "", unix.EWOULDBLOCK
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, "", err
	}
	desc := "pid " + strconv.Itoa(os.Getpid()) + ": " + strings.Join(os.Args, " ")
	if _, err := f.WriteAt([]byte(desc+"\n"), 0); err != nil {
		f.Close()
		return nil, "", err
	}
	return &machineLock{file: f}, "", nil
}

func mustStat(f *os.File) os.FileInfo {
	info, err := f.Stat()
	if err != nil {
		return nil
	}
	return info
}

// release removes the lock file while still holding the lock, so nothing
// is left behind, then unlocks.
func (l *machineLock) release() {
	_ = os.Remove(lockPath)
	_ = l.file.Close()
}
