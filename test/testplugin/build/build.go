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

// Package build builds the test plugin (test/testplugin) for tests that need
// a real plugin process, once per test binary.
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		build.Cleanup()
//		os.Exit(code)
//	}
//
//	path, err := build.Install(binDir, "deny-all") // binDir/deny-all
package build

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const testPluginPackage = "github.com/podadmission/podadmission/test/testplugin"

var (
	once     sync.Once
	buildDir string
	binary   string
	buildErr error
)

// Binary returns the path of the test plugin binary, building it with the
// go command on the first call. The module is found from the working
// directory, which go test sets to a package inside it.
func Binary() (string, error) {
	once.Do(func() {
		binary, buildErr = buildTestPlugin()
	})
	return binary, buildErr
}

func buildTestPlugin() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	moduleDir := filepath.Dir(strings.TrimSpace(string(gomod)))
	buildDir, err = os.MkdirTemp("", "podadmission-testplugin-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(buildDir, "testplugin")
	cmd := exec.Command("go", "build", "-o", out, testPluginPackage)
	cmd.Dir = moduleDir
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", testPluginPackage, err, output)
	}
	return out, nil
}

// ServeGRPC runs the test plugin as a GRPC daemon on socket (a path), with
// args after --serve, until the test ends, and returns once the socket
// exists. The daemon's stderr is the test's.
func ServeGRPC(t testing.TB, socket string, args ...string) {
	t.Helper()
	binary, err := Binary()
	if err != nil {
		t.Fatalf("build the test plugin: %v", err)
	}
	cmd := exec.Command(binary, append([]string{"--serve=unix://" + socket}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the test plugin: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(socket); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test plugin does not listen on %s after 10s", socket)
		}
	}
}

// Install copies the test plugin binary to dir/name with mode 0755 and
// returns that path. Run as root, the copy is root-owned, so it passes the
// Exec transport's trust checks; each copy is a file of its own, so a test
// can change one copy's owner or mode without touching the others.
func Install(dir, name string) (string, error) {
	src, err := Binary()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, name)
	if err := copyFile(src, dst, 0o755); err != nil {
		return "", fmt.Errorf("install the test plugin as %s: %w", dst, err)
	}
	return dst, nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	// Rename, so an Exec call never runs a half-written binary.
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// Cleanup removes the built binary. Call it from TestMain after m.Run.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
