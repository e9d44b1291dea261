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
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
)

func init() { trusttest.UseTrustedTempDir() }

// trustedRoot returns a new trusted directory, mode 0755.
func trustedRoot(t *testing.T) string {
	t.Helper()
	return trusttest.Dir(t)
}

func mkdir(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(path, 0o755))
	require.NoError(t, os.Chmod(path, mode))
	return path
}

func writeFile(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte("x"), mode))
	require.NoError(t, os.Chmod(path, mode))
	return path
}

func TestCheckFile(t *testing.T) {
	dir := trustedRoot(t)

	_, err := trust.CheckFile(writeFile(t, filepath.Join(dir, "ok"), 0o644))
	require.NoError(t, err)
	_, err = trust.CheckFile(writeFile(t, filepath.Join(dir, "ok-exec"), 0o755))
	require.NoError(t, err)

	p := writeFile(t, filepath.Join(dir, "group-writable"), 0o664)
	_, err = trust.CheckFile(p)
	require.EqualError(t, err, p+": mode 0664 is group or world writable")

	p = writeFile(t, filepath.Join(dir, "world-writable"), 0o646)
	_, err = trust.CheckFile(p)
	require.EqualError(t, err, p+": mode 0646 is group or world writable")

	p = writeFile(t, filepath.Join(dir, "not-root"), 0o644)
	require.NoError(t, os.Chown(p, 1000, 1000))
	_, err = trust.CheckFile(p)
	require.EqualError(t, err, p+": owned by uid 1000, must be owned by root")

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(p, link))
	_, err = trust.CheckFile(link)
	require.EqualError(t, err, link+": resolves to "+p+": owned by uid 1000, must be owned by root", "the target of a symlink is checked")

	_, err = trust.CheckFile(dir)
	require.EqualError(t, err, dir+": not a regular file (d---------)")
	_, err = trust.CheckFile(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.EqualError(t, err, "stat "+filepath.Join(dir, "missing")+": no such file or directory")
}

func TestCheckFileChecksEveryDirectoryOnThePath(t *testing.T) {
	root := trustedRoot(t)
	file := filepath.Join(root, "a", "b", "c", "config.yaml")
	mkdir(t, filepath.Dir(file), 0o755)
	writeFile(t, file, 0o644)
	_, err := trust.CheckFile(file)
	require.NoError(t, err)

	a := filepath.Join(root, "a")
	require.NoError(t, os.Chmod(a, 0o775))
	_, err = trust.CheckFile(file)
	require.EqualError(t, err, file+": on its path, "+a+": mode 0775 is group or world writable")
	require.NoError(t, os.Chmod(a, 0o755))

	b := filepath.Join(a, "b")
	require.NoError(t, trusttest.ChownToNobody(b))
	_, err = trust.CheckFile(file)
	require.EqualError(t, err, file+": on its path, "+b+": owned by uid 65534, must be owned by root")
}

func TestStickyWorldWritableDirectoryIsNotTrusted(t *testing.T) {
	root := trustedRoot(t)
	tmp := mkdir(t, filepath.Join(root, "tmp"), 0o777|os.ModeSticky)
	require.NoError(t, os.Chmod(tmp, 0o777|os.ModeSticky))
	file := writeFile(t, filepath.Join(tmp, "config.yaml"), 0o644)
	_, err := trust.CheckFile(file)
	require.EqualError(t, err, file+": on its path, "+tmp+": mode 01777 is group or world writable")
	require.EqualError(t, trust.CheckDir(tmp), tmp+": mode 01777 is group or world writable")
}

// Case 1 of issue 12: a symlink in a trusted bin dir to a program in a
// directory another user can write lets that user choose what runs as root.
func TestCheckExecutableThroughSymlinkChecksTheTargetsDirectories(t *testing.T) {
	root := trustedRoot(t)
	binDir := mkdir(t, filepath.Join(root, "bin"), 0o755)
	vendor := mkdir(t, filepath.Join(root, "opt", "vendor"), 0o755)
	target := writeFile(t, filepath.Join(vendor, "p"), 0o755)
	link := filepath.Join(binDir, "p")
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, trust.CheckExecutableIn(binDir, "p"), "a symlink along a trusted path is fine")

	// The vendor directory belongs to another user, who swaps the program.
	require.NoError(t, trusttest.ChownToNobody(vendor))
	swap := trusttest.AsNobody(exec.Command("/bin/sh", "-c", `rm -f "$1" && printf '#!/bin/sh\necho pwned\n' > "$1" && chmod 0755 "$1"`, "sh", target))
	out, err := swap.CombinedOutput()
	require.NoError(t, err, "nobody can replace the target: %s", out)

	err = trust.CheckExecutableIn(binDir, "p")
	require.EqualError(t, err, "untrusted executable: "+link+": on its path, "+vendor+": owned by uid 65534, must be owned by root")
}

func TestCheckDirThroughRelativeSymlinks(t *testing.T) {
	root := trustedRoot(t)
	// The layout of a ConfigMap volume: name -> ..data/name, ..data -> ..2026_01_01.
	data := mkdir(t, filepath.Join(root, "cm", "..2026_01_01", "pod-admission"), 0o755)
	require.NoError(t, os.Symlink("..2026_01_01", filepath.Join(root, "cm", "..data")))
	require.NoError(t, os.Symlink("..data/pod-admission", filepath.Join(root, "cm", "pod-admission")))
	dir := filepath.Join(root, "cm", "pod-admission")
	require.NoError(t, trust.CheckDir(dir))

	require.NoError(t, os.Chmod(filepath.Dir(data), 0o777))
	require.EqualError(t, trust.CheckDir(dir), dir+": on its path, "+filepath.Dir(data)+": mode 0777 is group or world writable")
	require.NoError(t, os.Chmod(filepath.Dir(data), 0o755))

	// A symlink that climbs out with "..": the directories it reaches count.
	other := mkdir(t, filepath.Join(root, "other"), 0o755)
	require.NoError(t, os.Symlink("../other", filepath.Join(root, "cm", "up")))
	require.NoError(t, trust.CheckDir(filepath.Join(root, "cm", "up")))
	require.NoError(t, os.Chmod(other, 0o757))
	require.EqualError(t, trust.CheckDir(filepath.Join(root, "cm", "up")), filepath.Join(root, "cm", "up")+": resolves to "+other+": mode 0757 is group or world writable")
}

func TestSymlinkInAnUntrustedDirectory(t *testing.T) {
	root := trustedRoot(t)
	target := writeFile(t, filepath.Join(root, "config.yaml"), 0o644)
	shared := mkdir(t, filepath.Join(root, "shared"), 0o777)
	link := filepath.Join(shared, "config.yaml")
	require.NoError(t, os.Symlink(target, link))
	_, err := trust.CheckFile(link)
	require.EqualError(t, err, link+": on its path, "+shared+": mode 0777 is group or world writable",
		"whoever can write the directory of a symlink can repoint it")
}

func TestSymlinkLoop(t *testing.T) {
	root := trustedRoot(t)
	require.NoError(t, os.Symlink("b", filepath.Join(root, "a")))
	require.NoError(t, os.Symlink("a", filepath.Join(root, "b")))
	_, err := trust.CheckFile(filepath.Join(root, "a"))
	require.ErrorIs(t, err, syscall.ELOOP)
}

func TestCheckDir(t *testing.T) {
	dir := trustedRoot(t)
	require.NoError(t, trust.CheckDir(dir))

	require.NoError(t, os.Chmod(dir, 0o777))
	require.EqualError(t, trust.CheckDir(dir), dir+": mode 0777 is group or world writable")
	require.NoError(t, os.Chmod(dir, 0o755))

	f := writeFile(t, filepath.Join(dir, "f"), 0o644)
	require.EqualError(t, trust.CheckDir(f), f+": not a directory")
	require.ErrorIs(t, trust.CheckDir(filepath.Join(f, "below")), syscall.ENOTDIR)
	require.NoError(t, trust.CheckDir("/"))
}

func TestCheckSocketDir(t *testing.T) {
	root := trustedRoot(t)
	dir := mkdir(t, filepath.Join(root, "run", "plugin"), 0o755)
	require.NoError(t, trust.CheckSocketDir(dir, 0))

	require.NoError(t, trusttest.ChownToNobody(dir))
	require.EqualError(t, trust.CheckSocketDir(dir, 0), dir+": owned by uid 65534, must be owned by root")
	require.NoError(t, trust.CheckSocketDir(dir, trusttest.NobodyUID), "the configured server uid may own the socket's directory")
	require.EqualError(t, trust.CheckSocketDir(dir, 1000), dir+": owned by uid 65534, must be owned by root or uid 1000")

	require.NoError(t, trusttest.ChownToNobody(filepath.Dir(dir)))
	require.EqualError(t, trust.CheckSocketDir(dir, trusttest.NobodyUID), dir+": on its path, "+filepath.Dir(dir)+": owned by uid 65534, must be owned by root",
		"only the socket's own directory may belong to the server uid")
}

func TestCheckExecutableIn(t *testing.T) {
	dir := trustedRoot(t)
	p := writeFile(t, filepath.Join(dir, "p"), 0o644)
	require.EqualError(t, trust.CheckExecutableIn(dir, "p"), "executable "+p+" is not executable (mode 0644)")
	require.NoError(t, os.Chmod(p, 0o700))
	assert.NoError(t, trust.CheckExecutableIn(dir, "p"))

	err := trust.CheckExecutableIn(dir, "missing")
	require.EqualError(t, err, "executable "+filepath.Join(dir, "missing")+" does not exist")
	require.ErrorIs(t, err, os.ErrNotExist)
	err = trust.CheckExecutableIn(filepath.Join(dir, "no-bin-dir"), "p")
	require.EqualError(t, err, "executable "+filepath.Join(dir, "no-bin-dir", "p")+" does not exist")

	require.NoError(t, os.Chmod(dir, 0o775))
	require.EqualError(t, trust.CheckExecutableIn(dir, "p"), "untrusted plugin bin dir: "+dir+": mode 0775 is group or world writable")
}
