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

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// The file that runs is the file that was checked: the executable is
// opened and checked (trust.OpenExecutableIn) and the kernel is asked to
// execute that open file, /proc/self/fd/N, which names the open file and
// not the path it was opened by. A swap of the path between the check and
// the exec changes nothing.
//
// A #! script is different: the kernel hands its interpreter the path the
// script was executed by, and the interpreter opens it after the exec. So
// a script is passed to its process as fd 3, open across the exec, and
// executed as /proc/self/fd/3: the interpreter reads the checked file, and
// $0 is /proc/self/fd/3. A binary gets no such descriptor: it is executed
// by a close-on-exec descriptor of the kubelet, which the exec closes.
// The interpreters themselves are opened by the kernel by their paths,
// which trust.OpenExecutableIn checked: only root can change what they
// name.

// scriptFD is where a script's process finds the script.
const scriptFD = 3

// minBinaryFD is the lowest descriptor a binary is executed by. The
// child's side of a fork (syscall.forkAndExecInChild) moves its files onto
// descriptors 0 to 2*len(files)+1 before the exec; a binary's descriptor
// above those stays what it is. Calls have at most four files.
const minBinaryFD = 16

// execution is how to execute a checked executable.
type execution struct {
	// path is what the plugin's process executes, and extraFiles the
	// files it gets from descriptor 3 on.
	path       string
	extraFiles []*os.File
	// sentinelPath and sentinelFiles are the same for the sentinel,
	// which executes the same file (pidns.go).
	sentinelPath  string
	sentinelFiles []uintptr
	// dup is the binary's descriptor, closed by close; -1 for a script.
	dup int
	// checked is this process's descriptor of the checked file, which
	// path names in the new process: dup, or a script's own.
	checked int
}

func newExecution(exe *trust.Executable) (*execution, error) {
	if exe.Script {
		path := fmt.Sprintf("/proc/self/fd/%d", scriptFD)
		return &execution{
			path:          path,
			extraFiles:    []*os.File{exe.File},
			sentinelPath:  path,
			sentinelFiles: []uintptr{exe.File.Fd()},
			dup:           -1,
			checked:       int(exe.File.Fd()),
		}, nil
	}
	fd, err := unix.FcntlInt(exe.File.Fd(), unix.F_DUPFD_CLOEXEC, minBinaryFD)
	if err != nil {
		return nil, fmt.Errorf("cannot duplicate the descriptor of %s: %w", exe.Path, err)
	}
	path := fmt.Sprintf("/proc/self/fd/%d", fd)
	return &execution{path: path, sentinelPath: path, dup: fd, checked: fd}, nil
}

// describeChecked says what the descriptor of the checked file is now,
// for the message of an exec refused with EACCES: the file passed its
// checks moments before, so anything but an executable regular file there
// (another file, a pipe, a closed descriptor) is a bug to find.
func (e *execution) describeChecked() string {
	var st unix.Stat_t
	if err := unix.Fstat(e.checked, &st); err != nil {
		return fmt.Sprintf("its descriptor %d: %v", e.checked, err)
	}
	target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", e.checked))
	if err != nil {
		target = err.Error()
	}
	kind := "not a regular file"
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		kind = "a regular file"
	}
	return fmt.Sprintf("its descriptor %d is %s, mode %#o, %s", e.checked, kind, st.Mode&0o7777, target)
}

func (e *execution) close() {
	if e.dup >= 0 {
		_ = unix.Close(e.dup)
		e.dup = -1
	}
}
