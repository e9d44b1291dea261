package trust

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckFile(t *testing.T) {
	if os.Geteuid() != TrustedUID {
		t.Fatalf("trust checks are tested as root (uid %d); running as uid %d", TrustedUID, os.Geteuid())
	}
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("x"), mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}

	require.NoError(t, CheckFile(write("ok", 0o644)))
	require.NoError(t, CheckFile(write("ok-exec", 0o755)))

	p := write("group-writable", 0o664)
	require.EqualError(t, CheckFile(p), p+": mode 0664 is group or world writable")

	p = write("world-writable", 0o646)
	require.EqualError(t, CheckFile(p), p+": mode 0646 is group or world writable")

	p = write("not-root", 0o644)
	require.NoError(t, os.Chown(p, 1000, 1000))
	require.EqualError(t, CheckFile(p), p+": owned by uid 1000, must be owned by root")

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(p, link))
	require.EqualError(t, CheckFile(link), link+": owned by uid 1000, must be owned by root", "the target of a symlink is checked")

	require.EqualError(t, CheckFile(dir), dir+": not a regular file (d---------)")
	require.ErrorIs(t, CheckFile(filepath.Join(dir, "missing")), os.ErrNotExist)
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, CheckDir(dir))

	require.NoError(t, os.Chmod(dir, 0o777))
	require.EqualError(t, CheckDir(dir), dir+": mode 0777 is group or world writable")

	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	require.EqualError(t, CheckDir(f), f+": not a directory")
}
