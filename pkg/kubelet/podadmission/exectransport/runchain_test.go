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

package exectransport_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
)

// asNobody runs a shell command as nobody, the attacker of these tests.
func asNobody(t *testing.T, command string, args ...string) {
	t.Helper()
	out, err := trusttest.AsNobody(osexec.Command("/bin/sh", append([]string{"-c", command, "sh"}, args...)...)).CombinedOutput()
	require.NoError(t, err, "nobody runs %q: %s", command, out)
}

// Case 2 of issue 18, reproduced: a root-owned 0755 script whose #! is
// python3 in a virtualenv directory owned by uid 65534. The user replaces
// the interpreter; the next call ran it as root, and it answered
// "allowed".
func TestInterpreterSwappedByAnotherUserNeverRuns(t *testing.T) {
	root := trusttest.Dir(t)
	bin := filepath.Join(root, "bin")
	venv := filepath.Join(root, "srv", "x", "venv", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.MkdirAll(venv, 0o755))
	python := filepath.Join(venv, "python3")
	data, err := os.ReadFile("/bin/sh") // a python3 that runs the script
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(python, data, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "p"), []byte("#!"+python+"\nexit 1\n"), 0o755))
	p := newPlugin(t, bin, "p")

	require.NoError(t, trusttest.ChownToNobody(venv))
	marker := filepath.Join(root, "ran-as-root")
	asNobody(t, `rm -f "$1" && printf '#!/bin/sh\ntouch %s\n%s' "$2" "$3" > "$1" && chmod 0755 "$1"`, python, marker, answerAllowed)

	resp, err := p.Admit(context.Background(), request("call-1"))
	assert.Nil(t, resp)
	require.EqualError(t, err, fmt.Sprintf("untrusted interpreter of %s: %s: on its path, %s: owned by uid 65534, must be owned by root",
		filepath.Join(bin, "p"), python, venv))
	assert.NoFileExists(t, marker, "the interpreter nobody put there never ran")
}

// The file checked is the file that runs: an executable swapped between
// the check and the exec, by whoever can, could run a file that was never
// checked. Here the bin dir's entry flips between a trusted plugin that
// denies and a script owned by nobody that would admit; no call may ever
// run the second.
func TestExecutableSwappedBetweenCheckAndExecNeverRuns(t *testing.T) {
	bin := binDir(t)
	marker := filepath.Join(t.TempDir(), "unchecked-ran")
	good := filepath.Join(bin, ".good")
	evil := filepath.Join(bin, ".evil")
	require.NoError(t, os.WriteFile(good, []byte("#!/bin/sh\ncat >/dev/null\nexit 3\n"), 0o755))
	require.NoError(t, os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+marker+"\n"+answerAllowed), 0o755))
	require.NoError(t, trusttest.ChownToNobody(evil))
	path := filepath.Join(bin, "p")
	require.NoError(t, os.Link(good, path))
	p := newPlugin(t, bin, "p")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			from := good
			if i%2 == 1 {
				from = evil
			}
			tmp := filepath.Join(bin, ".next")
			_ = os.Remove(tmp)
			if err := os.Link(from, tmp); err == nil {
				_ = os.Rename(tmp, path)
			}
			// Each state lasts from nothing to about as long as a call
			// takes from its check to its exec.
			time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	ran, refused := 0, 0
	for calls := 0; calls < 1000 && time.Now().Before(deadline); calls++ {
		resp, err := p.Admit(context.Background(), request("call-1"))
		switch {
		case err == nil:
			t.Fatalf("a call admitted: %+v", resp)
		case err.Error() == "exited with code 3":
			ran++
		default:
			refused++
		}
		require.NoFileExists(t, marker, "call %d ran a file that was not checked", calls)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d calls ran the checked plugin, %d refused the other file", ran, refused)
	assert.Positive(t, ran+refused)
}

// A script runs from the descriptor that was checked: its interpreter
// reads /proc/self/fd/3, which is also its $0.
func TestScriptRunsFromTheCheckedDescriptor(t *testing.T) {
	dir := binDir(t)
	writeScript(t, dir, "p", `echo "0=$0" >&2; exit 1`)
	p := newPlugin(t, dir, "p")
	_, err := p.Admit(context.Background(), request("call-1"))
	requireFailure(t, err, `exited with code 1`, `"0=/proc/self/fd/3"`)
}

// Case 2 of issue 18: a plugin configured with LD_PRELOAD (or another
// variable that makes the loader or an interpreter load code) naming a path
// another user can write ran that user's code as root.
func TestUntrustedCodeLoadingEnvironmentFailsTheCall(t *testing.T) {
	root := trusttest.Dir(t)
	theirs := filepath.Join(root, "home", "nobody")
	require.NoError(t, os.MkdirAll(theirs, 0o755))
	require.NoError(t, trusttest.ChownToNobody(theirs))
	dir := binDir(t)
	marker := filepath.Join(root, "ran")
	writeScript(t, dir, "p", "touch "+marker+"\n"+answerAllowed)
	for name, env := range map[string]configv1alpha1.ExecEnvVar{
		"LD_PRELOAD": {Name: "LD_PRELOAD", Value: filepath.Join(theirs, "hook.so")},
		"PATH":       {Name: "PATH", Value: theirs + ":/usr/bin:/bin"},
		"BASH_ENV":   {Name: "BASH_ENV", Value: filepath.Join(theirs, ".bashrc")},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := exectransport.New(&configv1alpha1.PluginConfig{Name: "p", Type: configv1alpha1.ExecPluginType, Env: []configv1alpha1.ExecEnvVar{env}}, dir)
			require.NoError(t, err)
			resp, err := p.Admit(context.Background(), request("call-1"))
			assert.Nil(t, resp)
			require.Error(t, err)
			assert.Regexp(t, `^environment variable `+name+`: .*, and it is not trusted: `, err.Error())
			assert.Contains(t, err.Error(), theirs+": owned by uid 65534, must be owned by root")
			assert.NoFileExists(t, marker, "the plugin never ran")
		})
	}
}

// A binary whose dynamic loader another user can replace never runs.
func TestUntrustedDynamicLoaderFailsTheCall(t *testing.T) {
	root := trusttest.Dir(t)
	lib := filepath.Join(root, "lib")
	require.NoError(t, os.MkdirAll(lib, 0o755))
	loader := filepath.Join(lib, "ld.so")
	data, err := os.ReadFile("/lib64/ld-linux-x86-64.so.2")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(loader, data, 0o755))
	dir := binDir(t)
	require.NoError(t, trusttest.CopyWithLoader("/bin/sh", filepath.Join(dir, "p"), loader))
	p := newPlugin(t, dir, "p", "-c", "exit 4")
	_, err = p.Admit(context.Background(), request("call-1"))
	require.EqualError(t, err, "exited with code 4", "it runs with a trusted loader")

	require.NoError(t, trusttest.ChownToNobody(lib))
	_, err = p.Admit(context.Background(), request("call-2"))
	require.EqualError(t, err, fmt.Sprintf("untrusted dynamic loader of %s: %s: on its path, %s: owned by uid 65534, must be owned by root", filepath.Join(dir, "p"), loader, lib))
}
