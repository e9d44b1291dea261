//go:build e2e_node

package framework

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// machineLock makes sure only one node e2e cluster runs on the machine:
// the kubelet writes fixed host paths, and two would share them.
type machineLock struct {
	file *os.File
}

func acquireMachineLock() (*machineLock, error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(lockPath)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another node e2e run holds %s (%s); only one may run per machine", lockPath, strings.TrimSpace(string(holder)))
		}
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	desc := "pid " + strconv.Itoa(os.Getpid()) + ": " + strings.Join(os.Args, " ")
	if _, err := f.WriteAt([]byte(desc+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	return &machineLock{file: f}, nil
}

// release removes the lock file while still holding the lock, so nothing
// is left behind, then unlocks.
func (l *machineLock) release() {
	_ = os.Remove(lockPath)
	_ = l.file.Close()
}
