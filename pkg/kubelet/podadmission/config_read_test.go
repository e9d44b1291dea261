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
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fsName names the file systems these tests mount, by magic number.
var fsName = map[int64]string{unix.EXT4_SUPER_MAGIC: "ext4", unix.TMPFS_MAGIC: "tmpfs", unix.OVERLAYFS_SUPER_MAGIC: "overlay"}

// mountForTest mounts a file system of type fstype on a new trusted
// directory and unmounts it when the test ends.
func mountForTest(t *testing.T, fstype string) string {
	t.Helper()
	root := filepath.Dir(configDir(t))
	dir := filepath.Join(root, fstype)
	require.NoError(t, os.Mkdir(dir, 0o755))
	data := ""
	if fstype == "overlay" {
		for _, d := range []string{"lower", "upper", "work"} {
			require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
		}
		data = "lowerdir=" + filepath.Join(root, "lower") + ",upperdir=" + filepath.Join(root, "upper") + ",workdir=" + filepath.Join(root, "work")
	}
	require.NoError(t, unix.Mount(fstype, dir, fstype, 0, data), "mount %s (the tests run as root)", fstype)
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// The read lease that keeps a reload from reading a file being written
// works on the file systems a node's configuration is on.
func TestNoFileOpenForWritingIsReadOnLocalFileSystems(t *testing.T) {
	dirs := map[string]string{"the test's temporary directory": configDir(t)}
	for _, fstype := range []string{"tmpfs", "overlay"} {
		dirs[fstype] = mountForTest(t, fstype)
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			var st unix.Statfs_t
			require.NoError(t, unix.Statfs(dir, &st))
			t.Logf("%s is %s", dir, fsName[st.Type])
			file := filepath.Join(dir, "10-a.yaml")
			writeConfigFile(t, file, execPluginYAML("a"))
			writer, err := os.OpenFile(file, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = LoadConfig(file)
			assert.ErrorIs(t, err, errBeingWritten)
			require.NoError(t, writer.Close())
			_, err = LoadConfig(file)
			assert.NoError(t, err)
		})
	}
}

// Birth times tell a new file that reuses an inode number from the same
// file written in place.
func TestStampsTellANewFileFromTheSameOne(t *testing.T) {
	file := filepath.Join(configDir(t), "10-a.yaml")
	writeConfigFile(t, file, execPluginYAML("a"))
	before, err := stampPath(file)
	require.NoError(t, err)
	require.NotZero(t, before.btime, "the file system has birth times")
	rewriteInPlace(t, file, execPluginYAML("b"))
	after, err := stampPath(file)
	require.NoError(t, err)
	assert.True(t, after.sameFile(before), "written in place: the same file")
	assert.NotEqual(t, before, after, "but not the same state")

	require.NoError(t, os.Remove(file))
	writeConfigFile(t, file, execPluginYAML("a"))
	again, err := stampPath(file)
	require.NoError(t, err)
	assert.False(t, again.sameFile(before), "a new file, whatever its inode number (%d, was %d)", again.ino, before.ino)
}
