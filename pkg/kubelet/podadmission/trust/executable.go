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

package trust

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxScripts is how many #! scripts the kernel runs one through the other
// before it refuses the exec with ELOOP: the executable and four
// interpreters that are scripts themselves, then a binary (fs/exec.c
// exec_binprm; TestInterpreterChainDepthIsTheKernels checks it on the
// running kernel).
const maxScripts = 5

// interpreterCwd is the directory a relative interpreter is resolved in:
// the kernel resolves it in the exec'ing process's working directory, and
// the Exec transport runs plugins in /.
const interpreterCwd = "/"

// Executable is an Exec plugin's executable, open and checked: its whole
// path, the file itself (the open file, not whatever the path names now)
// and everything the kernel runs for it, a script's interpreters and a
// binary's dynamic loader. Running File (through /proc/self/fd) runs the
// file that was checked, whatever happens to the path since.
type Executable struct {
	// File is the executable, open for reading, close-on-exec.
	File *os.File
	// Path is the executable as configured, for messages.
	Path string
	// Script says that the executable is a #! script: the kernel hands
	// the interpreter the script's path, /proc/self/fd/N when File is
	// run, so File must stay open in the process that runs it.
	Script bool
}

// Close closes the executable's file.
func (e *Executable) Close() error { return e.File.Close() }

// OpenExecutableIn opens dir/name, the executable of an Exec plugin in the
// plugin bin dir dir, and checks it the way the kubelet checks it at load
// and before every call: dir trusted; the executable a trusted, executable
// regular file at the end of a trusted path (through symlinks, every
// directory on the way), and the file opened the one that was checked; if
// it is a #! script, every interpreter the kernel would run for it, to the
// kernel's depth, trusted the same way and executable; if it or the last
// interpreter is a dynamically linked ELF binary, its dynamic loader
// (PT_INTERP) trusted too. A missing executable or interpreter (or bin
// dir) is an error that wraps fs.ErrNotExist.
func OpenExecutableIn(dir, name string) (*Executable, error) {
	path := filepath.Join(dir, name)
	if err := CheckDir(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &missingError{what: "executable", path: path}
		}
		return nil, fmt.Errorf("untrusted plugin bin dir: %w", err)
	}
	f, err := openChecked(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &missingError{what: "executable", path: path}
		}
		var notExec *notExecutableError
		if errors.As(err, &notExec) {
			return nil, fmt.Errorf("executable %s", err)
		}
		return nil, fmt.Errorf("untrusted executable: %w", err)
	}
	script, err := checkRunChain(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Executable{File: f, Path: path, Script: script}, nil
}

// CheckExecutableIn is OpenExecutableIn without keeping the file open.
func CheckExecutableIn(dir, name string) error {
	e, err := OpenExecutableIn(dir, name)
	if err != nil {
		return err
	}
	return e.Close()
}

// openChecked opens path, a file the kernel is to execute, and checks the
// open file: every directory on the way to it trusted (resolve), the file
// it resolves to the one opened (same device and inode), a regular file,
// trusted and executable. O_NONBLOCK keeps a FIFO put in its place from
// blocking the open; it is refused as not a regular file.
func openChecked(path string) (*os.File, error) {
	r, err := resolve(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, r.pathError(err)
	}
	info, err := f.Stat()
	if err == nil {
		err = r.checkOpened(info)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOpened checks info, the stat of the file opened at r.path, against
// what r resolved: the same file, a regular one, trusted and executable.
func (r *resolution) checkOpened(info fs.FileInfo) error {
	if !os.SameFile(info, r.info) {
		return r.fault(r.final, "replaced while it was checked")
	}
	if !info.Mode().IsRegular() {
		return r.fault(r.final, fmt.Sprintf("not a regular file (%s)", info.Mode().Type()))
	}
	if err := r.checkOwnerAndMode(r.final, info, TrustedUID); err != nil {
		return err
	}
	if info.Mode().Perm()&0o111 == 0 {
		return &notExecutableError{path: r.path, mode: info.Mode().Perm()}
	}
	return nil
}

// checkRunChain checks what the kernel runs when it executes f, the
// checked file at path: for a #! script, its interpreter, and the
// interpreter's interpreter, each opened and checked like the executable;
// for a dynamically linked ELF binary at the end, its loader. It says
// whether path is a script. A file that is neither (the kernel refuses it,
// or a binfmt_misc handler root registered runs it) has nothing more to
// check.
func checkRunChain(path string, f *os.File) (script bool, err error) {
	current, file := path, f
	var through []string
	defer func() {
		if file != f {
			file.Close()
		}
	}()
	for scripts := 0; ; scripts++ {
		header, err := readHeader(file)
		if err != nil {
			return false, fmt.Errorf("cannot read %s: %w", current, err)
		}
		if isELF(header) {
			return scripts > 0, checkLoader(path, through, current, file)
		}
		interpreter, ok := shebangInterpreter(header)
		if !ok {
			return scripts > 0, nil
		}
		if scripts == maxScripts {
			return false, fmt.Errorf("%s runs more than %d #! scripts one through the other: the kernel refuses it (ELOOP)", path, maxScripts)
		}
		if !filepath.IsAbs(interpreter) {
			interpreter = filepath.Join(interpreterCwd, interpreter)
		}
		next, err := openChecked(interpreter)
		if err != nil {
			return false, interpreterError(path, through, err)
		}
		if file != f {
			file.Close()
		}
		through = append(through, interpreter)
		current, file = interpreter, next
	}
}

// checkLoader checks the dynamic loader of file, the ELF binary at the end
// of path's chain (current, reached through the interpreters through): the
// kernel opens it by name and runs it before the binary's own code. It
// lives in /lib on every distribution, so checking it is a walk of a few
// root-owned directories. Whatever the loader then loads through its own
// configuration (ld.so.cache, a binary's RUNPATH) is not followed.
func checkLoader(path string, through []string, current string, file *os.File) error {
	loader, err := elfInterpreter(file)
	if err != nil {
		return fmt.Errorf("cannot read the program headers of %s: %w", current, err)
	}
	if loader == "" {
		return nil // statically linked
	}
	if !filepath.IsAbs(loader) {
		loader = filepath.Join(interpreterCwd, loader)
	}
	if _, err := CheckFile(loader); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &missingError{what: "dynamic loader " + loader + " of", path: chainName(path, through, current)}
		}
		return fmt.Errorf("untrusted dynamic loader of %s: %w", chainName(path, through, current), err)
	}
	return nil
}

// chainName names current, the file of path's chain whose loader is at
// fault: path itself, or its interpreter.
func chainName(path string, through []string, current string) string {
	if current == path {
		return path
	}
	return fmt.Sprintf("%s (the interpreter of %s)", current, viaName(path, through[:len(through)-1]))
}

// interpreterError is err, the failed check of the last interpreter of
// path's chain, said in terms of path.
func interpreterError(path string, through []string, err error) error {
	of := viaName(path, through)
	var notExec *notExecutableError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		var pathErr *fs.PathError
		missing := "the interpreter"
		if errors.As(err, &pathErr) {
			missing = "interpreter " + pathErr.Path
		}
		return &missingError{what: missing + " of", path: of}
	case errors.As(err, &notExec):
		return fmt.Errorf("interpreter %s of %s", err, of)
	}
	return fmt.Errorf("untrusted interpreter of %s: %w", of, err)
}

// viaName is path, followed by the interpreters it goes through to reach
// the one at fault.
func viaName(path string, through []string) string {
	if len(through) == 0 {
		return path
	}
	return fmt.Sprintf("%s (through %s)", path, strings.Join(through, ", "))
}

// missingError is an executable, or a file the kernel needs to run it,
// that is not installed.
type missingError struct{ what, path string }

func (e *missingError) Error() string {
	return fmt.Sprintf("%s %s does not exist", e.what, e.path)
}

func (e *missingError) Is(target error) bool { return target == fs.ErrNotExist }

// notExecutableError is a file the kernel would refuse to execute: no
// execute bit.
type notExecutableError struct {
	path string
	mode fs.FileMode
}

func (e *notExecutableError) Error() string {
	return fmt.Sprintf("%s is not executable (mode %#o)", e.path, e.mode)
}

// binprmBufSize is how much of a file the kernel reads to tell its format
// and parse a #! line (BINPRM_BUF_SIZE, 256 since Linux 5.1).
const binprmBufSize = 256

// readHeader reads the first binprmBufSize bytes of f, fewer if it is
// shorter.
func readHeader(f *os.File) ([]byte, error) {
	buf := make([]byte, binprmBufSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}
