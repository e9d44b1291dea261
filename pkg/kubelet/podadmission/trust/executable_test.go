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

package trust_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
)

// script writes an executable script at path whose #! line is shebang.
func script(t *testing.T, path, shebang string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte("#!"+shebang+"\necho hello\n"), 0o755))
	require.NoError(t, os.Chmod(path, 0o755))
	return path
}

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, data, mode))
	require.NoError(t, os.Chmod(dst, mode))
	return dst
}

func TestOpenExecutableInChecksTheOpenedFile(t *testing.T) {
	bin := mkdir(t, filepath.Join(trustedRoot(t), "bin"), 0o755)
	copyFile(t, "/bin/true", filepath.Join(bin, "p"), 0o755)

	exe, err := trust.OpenExecutableIn(bin, "p")
	require.NoError(t, err)
	defer exe.Close()
	assert.False(t, exe.Script)
	assert.Equal(t, filepath.Join(bin, "p"), exe.Path)
	opened, err := exe.File.Stat()
	require.NoError(t, err)
	onDisk, err := os.Stat(filepath.Join(bin, "p"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(opened, onDisk))

	script(t, filepath.Join(bin, "s"), "/bin/sh")
	exe, err = trust.OpenExecutableIn(bin, "s")
	require.NoError(t, err)
	defer exe.Close()
	assert.True(t, exe.Script, "a script's file must stay open in its process")
}

// Case 2 of issue 18: a root-owned 0755 script whose #! names an
// interpreter in a directory another user owns was valid, and its
// interpreter ran as root whatever that user put there.
func TestUntrustedInterpreterIsRefused(t *testing.T) {
	root := trustedRoot(t)
	bin := mkdir(t, filepath.Join(root, "bin"), 0o755)
	venv := mkdir(t, filepath.Join(root, "srv", "x", "venv", "bin"), 0o755)
	python := copyFile(t, "/bin/sh", filepath.Join(venv, "python3"), 0o755)
	script(t, filepath.Join(bin, "p"), python)
	require.NoError(t, trust.CheckExecutableIn(bin, "p"), "an interpreter on a trusted path is fine")

	for name, tc := range map[string]struct {
		setup   func(t *testing.T)
		wantErr string
	}{
		"interpreter's directory owned by nobody": {
			setup:   func(t *testing.T) { require.NoError(t, trusttest.ChownToNobody(venv)) },
			wantErr: fmt.Sprintf("untrusted interpreter of %s: %s: on its path, %s: owned by uid 65534, must be owned by root", filepath.Join(bin, "p"), python, venv),
		},
		"interpreter's directory writable by others": {
			setup:   func(t *testing.T) { require.NoError(t, os.Chmod(venv, 0o777)) },
			wantErr: fmt.Sprintf("untrusted interpreter of %s: %s: on its path, %s: mode 0777 is group or world writable", filepath.Join(bin, "p"), python, venv),
		},
		"interpreter owned by nobody": {
			setup:   func(t *testing.T) { require.NoError(t, trusttest.ChownToNobody(python)) },
			wantErr: fmt.Sprintf("untrusted interpreter of %s: %s: owned by uid 65534, must be owned by root", filepath.Join(bin, "p"), python),
		},
		"interpreter group writable": {
			setup:   func(t *testing.T) { require.NoError(t, os.Chmod(python, 0o775)) },
			wantErr: fmt.Sprintf("untrusted interpreter of %s: %s: mode 0775 is group or world writable", filepath.Join(bin, "p"), python),
		},
		"interpreter not executable": {
			setup:   func(t *testing.T) { require.NoError(t, os.Chmod(python, 0o644)) },
			wantErr: fmt.Sprintf("interpreter %s is not executable (mode 0644) of %s", python, filepath.Join(bin, "p")),
		},
		"interpreter a directory": {
			setup: func(t *testing.T) {
				require.NoError(t, os.Remove(python))
				require.NoError(t, os.Mkdir(python, 0o755))
			},
			wantErr: fmt.Sprintf("untrusted interpreter of %s: %s: not a regular file (d---------)", filepath.Join(bin, "p"), python),
		},
	} {
		t.Run(name, func(t *testing.T) {
			for _, d := range []string{venv} {
				require.NoError(t, os.Chmod(d, 0o755))
				require.NoError(t, os.Chown(d, 0, 0))
			}
			_ = os.Remove(python)
			copyFile(t, "/bin/sh", python, 0o755)
			tc.setup(t)
			err := trust.CheckExecutableIn(bin, "p")
			require.EqualError(t, err, tc.wantErr)
			assert.NotErrorIs(t, err, fs.ErrNotExist)
		})
	}
}

func TestInterpreterChainIsCheckedToTheEnd(t *testing.T) {
	root := trustedRoot(t)
	bin := mkdir(t, filepath.Join(root, "bin"), 0o755)
	lib := mkdir(t, filepath.Join(root, "lib"), 0o755)
	vendor := mkdir(t, filepath.Join(root, "vendor"), 0o755)
	real := copyFile(t, "/bin/sh", filepath.Join(vendor, "sh"), 0o755)
	wrapper := script(t, filepath.Join(lib, "wrapper"), real+" -e")
	script(t, filepath.Join(bin, "p"), " \t"+wrapper+"  -x  ")
	require.NoError(t, trust.CheckExecutableIn(bin, "p"))

	require.NoError(t, trusttest.ChownToNobody(vendor))
	require.EqualError(t, trust.CheckExecutableIn(bin, "p"), fmt.Sprintf(
		"untrusted interpreter of %s (through %s): %s: on its path, %s: owned by uid 65534, must be owned by root",
		filepath.Join(bin, "p"), wrapper, real, vendor))
}

// An interpreter is looked up through symlinks like the executable: the
// directories of the link and of its target are checked.
func TestInterpreterThroughASymlink(t *testing.T) {
	root := trustedRoot(t)
	bin := mkdir(t, filepath.Join(root, "bin"), 0o755)
	links := mkdir(t, filepath.Join(root, "links"), 0o755)
	vendor := mkdir(t, filepath.Join(root, "vendor"), 0o755)
	copyFile(t, "/bin/sh", filepath.Join(vendor, "sh"), 0o755)
	require.NoError(t, os.Symlink("../vendor/sh", filepath.Join(links, "sh")))
	script(t, filepath.Join(bin, "p"), filepath.Join(links, "sh"))
	require.NoError(t, trust.CheckExecutableIn(bin, "p"))

	require.NoError(t, os.Chmod(vendor, os.ModeSticky|0o777))
	require.EqualError(t, trust.CheckExecutableIn(bin, "p"), fmt.Sprintf(
		"untrusted interpreter of %s: %s: on its path, %s: mode 01777 is group or world writable",
		filepath.Join(bin, "p"), filepath.Join(links, "sh"), vendor))
}

// An interpreter that is not installed is like an executable that is not:
// its plugin fails its calls until it is (the kernel would say ENOENT),
// and the error wraps fs.ErrNotExist.
func TestMissingInterpreter(t *testing.T) {
	root := trustedRoot(t)
	bin := mkdir(t, filepath.Join(root, "bin"), 0o755)
	missing := filepath.Join(root, "opt", "python3")
	script(t, filepath.Join(bin, "p"), missing)
	err := trust.CheckExecutableIn(bin, "p")
	require.EqualError(t, err, fmt.Sprintf("interpreter %s of %s does not exist", missing, filepath.Join(bin, "p")))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// The kernel resolves a relative interpreter in the working directory of
// the process, / for plugins.
func TestRelativeInterpreterIsResolvedFromRoot(t *testing.T) {
	bin := mkdir(t, filepath.Join(trustedRoot(t), "bin"), 0o755)
	script(t, filepath.Join(bin, "p"), "bin/sh")
	require.NoError(t, trust.CheckExecutableIn(bin, "p"))
	script(t, filepath.Join(bin, "q"), "no/such/interpreter")
	require.EqualError(t, trust.CheckExecutableIn(bin, "q"), fmt.Sprintf("interpreter /no/such/interpreter of %s does not exist", filepath.Join(bin, "q")))
}

// The kernel runs at most five #! scripts one through the other, then says
// ELOOP; the check follows the chain as far, and refuses longer chains.
// Each chain is run by the kernel too, so the limit is the running
// kernel's.
func TestInterpreterChainDepthIsTheKernels(t *testing.T) {
	root := trustedRoot(t)
	bin := mkdir(t, filepath.Join(root, "bin"), 0o755)
	previous := "/bin/sh"
	for n := 1; n <= 6; n++ {
		name := fmt.Sprintf("chain%d", n)
		path := filepath.Join(bin, name)
		if n == 1 {
			require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\necho ran\n"), 0o755))
		} else {
			require.NoError(t, os.WriteFile(path, []byte("#!"+previous+"\n"), 0o755))
		}
		previous = path

		out, runErr := exec.Command(path).CombinedOutput()
		err := trust.CheckExecutableIn(bin, name)
		if n <= 5 {
			require.NoError(t, runErr, "the kernel runs a chain of %d scripts: %s", n, out)
			require.NoError(t, err, "a chain of %d scripts", n)
			continue
		}
		require.ErrorIs(t, runErr, syscall.ELOOP, "the kernel refuses a chain of %d scripts: %s", n, out)
		require.EqualError(t, err, path+" runs more than 5 #! scripts one through the other: the kernel refuses it (ELOOP)")
	}
}

// A dynamically linked binary runs its loader (PT_INTERP) before its own
// code: the kernel opens it by name.
func TestDynamicLoaderIsChecked(t *testing.T) {
	root := trustedRoot(t)
	bin := mkdir(t, filepath.Join(root, "bin"), 0o755)
	lib := mkdir(t, filepath.Join(root, "lib"), 0o755)
	loader := copyFile(t, "/lib64/ld-linux-x86-64.so.2", filepath.Join(lib, "ld.so"), 0o755)
	require.NoError(t, trusttest.CopyWithLoader("/bin/sh", filepath.Join(bin, "p"), loader))
	out, err := exec.Command(filepath.Join(bin, "p"), "-c", "echo ran").CombinedOutput()
	require.NoError(t, err, "the copy runs with its new loader: %s", out)
	require.NoError(t, trust.CheckExecutableIn(bin, "p"))

	require.NoError(t, trusttest.ChownToNobody(lib))
	require.EqualError(t, trust.CheckExecutableIn(bin, "p"), fmt.Sprintf(
		"untrusted dynamic loader of %s: %s: on its path, %s: owned by uid 65534, must be owned by root", filepath.Join(bin, "p"), loader, lib))

	// The loader of a script's interpreter too.
	require.NoError(t, os.Rename(filepath.Join(bin, "p"), filepath.Join(root, "sh")))
	script(t, filepath.Join(bin, "s"), filepath.Join(root, "sh"))
	require.EqualError(t, trust.CheckExecutableIn(bin, "s"), fmt.Sprintf(
		"untrusted dynamic loader of %s (the interpreter of %s): %s: on its path, %s: owned by uid 65534, must be owned by root",
		filepath.Join(root, "sh"), filepath.Join(bin, "s"), loader, lib))

	require.NoError(t, os.Chown(lib, 0, 0))
	require.NoError(t, os.Remove(loader))
	err = trust.CheckExecutableIn(bin, "s")
	require.EqualError(t, err, fmt.Sprintf("dynamic loader %s of %s (the interpreter of %s) does not exist", loader, filepath.Join(root, "sh"), filepath.Join(bin, "s")))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// The system's own binaries pass: their loader is root's.
func TestSystemBinariesPass(t *testing.T) {
	for _, path := range []string{"/bin/sh", "/bin/true", "/usr/bin/env"} {
		require.NoError(t, trust.CheckExecutableIn(filepath.Dir(path), filepath.Base(path)), path)
	}
}

// A file that is neither ELF nor a script has nothing more to check: the
// kernel refuses it (or a binfmt_misc handler root registered runs it).
func TestOtherFormatsHaveNoChain(t *testing.T) {
	bin := mkdir(t, filepath.Join(trustedRoot(t), "bin"), 0o755)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "p"), []byte("not a program\n"), 0o755))
	require.NoError(t, trust.CheckExecutableIn(bin, "p"))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "empty"), nil, 0o755))
	require.NoError(t, trust.CheckExecutableIn(bin, "empty"))
}

// A truncated or corrupt ELF file is refused rather than guessed at.
func TestCorruptELFIsRefused(t *testing.T) {
	bin := mkdir(t, filepath.Join(trustedRoot(t), "bin"), 0o755)
	data, err := os.ReadFile("/bin/sh")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "p"), data[:40], 0o755))
	err = trust.CheckExecutableIn(bin, "p")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "cannot read the program headers of "+filepath.Join(bin, "p")+": "), err.Error())
}
