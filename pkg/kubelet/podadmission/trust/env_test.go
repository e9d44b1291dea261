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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"
)

// Case 2 of issue 18: LD_PRELOAD, LD_LIBRARY_PATH or PYTHONPATH in a
// plugin's configuration pointing at a path another user can write made
// that user's code run as root in every call.
func TestCheckEnv(t *testing.T) {
	root := trustedRoot(t)
	trusted := mkdir(t, filepath.Join(root, "lib"), 0o755)
	hook := writeFile(t, filepath.Join(trusted, "hook.so"), 0o644)
	theirs := mkdir(t, filepath.Join(root, "home", "nobody"), 0o755)
	require.NoError(t, trusttest.ChownToNobody(theirs))
	theirHook := filepath.Join(theirs, "hook.so")
	open := mkdir(t, filepath.Join(root, "shared"), os.ModeSticky|0o777)

	for name, tc := range map[string]struct {
		name, value string
		wantErr     string
	}{
		"not a code-loading variable":     {name: "ZONE", value: theirs},
		"trusted library":                 {name: "LD_PRELOAD", value: hook},
		"library names are searched":      {name: "LD_PRELOAD", value: "libfoo.so libbar.so"},
		"trusted library path":            {name: "LD_LIBRARY_PATH", value: trusted + ":/usr/lib"},
		"missing path under trusted dirs": {name: "PYTHONPATH", value: filepath.Join(trusted, "not-yet")},
		"empty entry is /":                {name: "PATH", value: ":/usr/bin"},
		"untrusted preload": {
			name: "LD_PRELOAD", value: hook + ":" + theirHook,
			wantErr: fmt.Sprintf("LD_PRELOAD: the dynamic loader loads these libraries first, and it is not trusted: %s: on its path, %s: owned by uid 65534, must be owned by root", theirHook, theirs),
		},
		"preload separated by spaces": {
			name: "LD_PRELOAD", value: "libfoo.so " + theirHook,
			wantErr: fmt.Sprintf("LD_PRELOAD: the dynamic loader loads these libraries first, and it is not trusted: %s: on its path, %s: owned by uid 65534, must be owned by root", theirHook, theirs),
		},
		"library path owned by another user": {
			name: "LD_LIBRARY_PATH", value: "/usr/lib;" + theirs,
			wantErr: fmt.Sprintf("LD_LIBRARY_PATH: the dynamic loader looks for libraries here first, and it is not trusted: %s: owned by uid 65534, must be owned by root", theirs),
		},
		"python path in a sticky world-writable directory": {
			name: "PYTHONPATH", value: filepath.Join(open, "site"),
			wantErr: fmt.Sprintf("PYTHONPATH: Python imports modules from here first, and it is not trusted: %s: on its path, %s: mode 01777 is group or world writable", filepath.Join(open, "site"), open),
		},
		"relative entries are taken from /": {
			name: "PERL5LIB", value: "tmp",
			wantErr: "PERL5LIB: Perl loads modules from here first, and it is not trusted: /tmp: mode 01777 is group or world writable",
		},
		"PATH with another user's directory": {
			name: "PATH", value: theirs + ":/usr/bin",
			wantErr: fmt.Sprintf("PATH: commands, and the interpreter of #!/usr/bin/env, are looked up here, and it is not trusted: %s: owned by uid 65534, must be owned by root", theirs),
		},
		"BASH_ENV": {
			name: "BASH_ENV", value: filepath.Join(theirs, "rc"),
			wantErr: fmt.Sprintf("BASH_ENV: bash runs this file before the script, and it is not trusted: %s: on its path, %s: owned by uid 65534, must be owned by root", filepath.Join(theirs, "rc"), theirs),
		},
		"dynamic string token": {
			name: "LD_LIBRARY_PATH", value: "$ORIGIN/../lib",
			wantErr: "LD_LIBRARY_PATH: the dynamic loader looks for libraries here first; its value has a dynamic string token ($ORIGIN, $LIB, $PLATFORM) that cannot be checked: write the paths out",
		},
		"options cannot be checked": {
			name: "NODE_OPTIONS", value: "--max-old-space-size=64",
			wantErr: "NODE_OPTIONS: Node.js takes these as command line options (--require, --import load code), which cannot be checked: set the interpreter's options on its #! line or in the plugin's args instead",
		},
		"versioned family": {
			name: "LUA_PATH_5_4", value: "/usr/share/lua/?.lua",
			wantErr: "LUA_PATH_5_4: Lua loads modules from these templates, which cannot be checked: set the interpreter's options on its #! line or in the plugin's args instead",
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := trust.CheckEnv(tc.name, tc.value)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.wantErr)
			var envErr *trust.EnvError
			require.True(t, errors.As(err, &envErr))
			assert.Equal(t, tc.name, envErr.Name)
		})
	}
}

// A path that does not exist yet passes only when the directories that do
// exist on its way are trusted: nobody but root can create it then.
func TestCheckEnvMissingPathUnderAnUntrustedDirectory(t *testing.T) {
	theirs := mkdir(t, filepath.Join(trustedRoot(t), "theirs"), 0o755)
	require.NoError(t, trusttest.ChownToNobody(theirs))
	missing := filepath.Join(theirs, "not", "yet")
	err := trust.CheckEnv("PYTHONPATH", missing)
	require.EqualError(t, err, fmt.Sprintf("PYTHONPATH: Python imports modules from here first, and it is not trusted: %s: on its path, %s: owned by uid 65534, must be owned by root", missing, theirs))
	_, statErr := os.Stat(missing)
	require.True(t, os.IsNotExist(statErr))
}
