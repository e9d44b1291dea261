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
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// maxConfigFileSize bounds one configuration file; a few plugins take a
// few hundred bytes.
const maxConfigFileSize = 1 << 20

var (
	// errBeingWritten: a process has the file open for writing, so what
	// could be read now may be half of what it is writing.
	errBeingWritten = errors.New("open for writing by another process; read once it is closed")
	// errChangedWhileRead: the file was replaced or changed between the
	// trust check and the end of the read; it is read again.
	errChangedWhileRead = errors.New("changed while it was being read")
)

// fileRead is one configuration file as read.
type fileRead struct {
	data  []byte
	stamp fileStamp
}

// readConfigFile reads one trusted configuration file that no process has
// open for writing.
//
// It takes a read lease on the file (fcntl F_SETLEASE F_RDLCK) for the
// time of the read: the kernel refuses one while any process has the file
// open for writing, and a process that opens it for writing meanwhile
// waits until the lease is released, so what is read is the file as its
// last writer left it. The kubelet runs as root, which may take leases on
// any file (CAP_LEASE). Where leases are not available (some network file
// systems, fs.leases-enable=0, no CAP_LEASE) the file is read without one,
// and that is logged once.
func readConfigFile(path string) (*fileRead, error) {
	checked, err := trust.CheckFile(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pathError(path, err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, pathError(path, err)
	}
	if !os.SameFile(checked, opened) {
		return nil, fmt.Errorf("%s: %w", path, errChangedWhileRead)
	}
	release, err := takeReadLease(path, f)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFileSize+1))
	release()
	if err != nil {
		return nil, pathError(path, err)
	}
	if len(data) > maxConfigFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxConfigFileSize)
	}
	stamp, err := stampFile(f)
	if err != nil {
		return nil, pathError(path, err)
	}
	if stamp.size != int64(len(data)) {
		// Only without a lease: a writer got in during the read.
		return nil, fmt.Errorf("%s: %w", path, errChangedWhileRead)
	}
	return &fileRead{data: data, stamp: stamp}, nil
}

var leaseFallbackOnce sync.Once

// takeReadLease takes a read lease on f and returns its release. It fails
// with errBeingWritten when a process has the file open for writing.
func takeReadLease(path string, f *os.File) (release func(), err error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return nil, pathError(path, err)
	}
	var leaseErr error
	if err := conn.Control(func(fd uintptr) {
		_, leaseErr = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_RDLCK)
	}); err != nil {
		return nil, pathError(path, err)
	}
	switch {
	case leaseErr == nil:
		return func() {
			_ = conn.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK) })
		}, nil
	case errors.Is(leaseErr, syscall.EAGAIN):
		return nil, fmt.Errorf("%s: %w", path, errBeingWritten)
	}
	leaseFallbackOnce.Do(func() {
		klog.Background().Info("Cannot take a read lease on pod admission configuration files; reading them without one. A file being written in place can then be read half-written; reloads still refuse in-place changes that remove or change plugins",
			"file", path, "err", leaseErr)
	})
	return func() {}, nil
}

// fileStamp identifies a file's inode and its state: a file whose stamp is
// the same as when it was read has not been replaced, written or chmod-ed
// since, unless it was written within the timestamp granularity of its
// file system right after the read (see configSnapshot.racy). The birth
// time tells a new file that got the inode number of a deleted one (ext4
// hands freed numbers out again) from the old file changed in place; file
// systems without birth times report 0.
type fileStamp struct {
	dev, ino            uint64
	btime, mtime, ctime int64 // nanoseconds
	size                int64
	mode, uid           uint32
}

// statxMask is what a stamp is made of.
const statxMask = unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_UID | unix.STATX_INO | unix.STATX_SIZE |
	unix.STATX_MTIME | unix.STATX_CTIME | unix.STATX_BTIME

// stampPath stamps the file path resolves to.
func stampPath(path string) (fileStamp, error) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_SYNC_AS_STAT, statxMask, &stx); err != nil {
		return fileStamp{}, &fs.PathError{Op: "statx", Path: path, Err: err}
	}
	return stampOfStatx(&stx), nil
}

// stampFile stamps an open file.
func stampFile(f *os.File) (fileStamp, error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return fileStamp{}, err
	}
	var stx unix.Statx_t
	var statErr error
	if err := conn.Control(func(fd uintptr) {
		statErr = unix.Statx(int(fd), "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, statxMask, &stx)
	}); err != nil {
		return fileStamp{}, err
	}
	if statErr != nil {
		return fileStamp{}, &fs.PathError{Op: "statx", Path: f.Name(), Err: statErr}
	}
	return stampOfStatx(&stx), nil
}

func stampOfStatx(stx *unix.Statx_t) fileStamp {
	s := fileStamp{
		dev:   unix.Mkdev(stx.Dev_major, stx.Dev_minor),
		ino:   stx.Ino,
		mtime: stx.Mtime.Sec*1e9 + int64(stx.Mtime.Nsec),
		ctime: stx.Ctime.Sec*1e9 + int64(stx.Ctime.Nsec),
		size:  int64(stx.Size),
		mode:  uint32(stx.Mode),
		uid:   stx.Uid,
	}
	if stx.Mask&unix.STATX_BTIME != 0 {
		s.btime = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
	}
	return s
}

// isDir says whether the stamp is of a directory.
func (s fileStamp) isDir() bool { return s.mode&unix.S_IFMT == unix.S_IFDIR }

// sameFile says whether two stamps are of the same file: the same inode,
// born at the same time.
func (s fileStamp) sameFile(o fileStamp) bool {
	return s.dev == o.dev && s.ino == o.ino && s.btime == o.btime
}

// sameInodeAcrossBoots says whether two stamps, one of them recorded
// before a kubelet restart or a reboot, are of the same file: the same
// inode number, born at the same time. The device number is not compared:
// it may change across a reboot (device-mapper and NVMe numbering).
func (s fileStamp) sameInodeAcrossBoots(o fileStamp) bool {
	return s.ino == o.ino && s.btime == o.btime
}
