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
	"io/fs"
	"path/filepath"
	"strings"
)

// An environment variable can make the dynamic loader or an interpreter
// load code from a path it names, as root, before or instead of the
// plugin's own: such a variable in an Exec plugin's configuration is part
// of what runs, and the paths it names must pass the same checks as the
// executable. The variables, and where each is documented:
var codeLoadingEnv = map[string]envUse{
	// ld.so(8) ENVIRONMENT; glibc's own list of variables it ignores for
	// set-user-ID programs (sysdeps/generic/unsecvars.h) has these too.
	"LD_PRELOAD":      {what: "the dynamic loader loads these libraries first", kind: libraries, separators: ": \t", loader: true},
	"LD_AUDIT":        {what: "the dynamic loader loads these auditing libraries", kind: libraries, separators: ":", loader: true},
	"LD_LIBRARY_PATH": {what: "the dynamic loader looks for libraries here first", kind: searchPath, separators: ":;", loader: true},
	// iconv(3) (and so every locale conversion of glibc) loads modules
	// from GCONV_PATH; unsecvars.h.
	"GCONV_PATH": {what: "glibc loads character set conversion modules from here", kind: searchPath, separators: ":"},
	// sh(1) and env(1), which #!/usr/bin/env uses, run the commands a
	// script names from the first PATH directory that has them.
	"PATH": {what: "commands, and the interpreter of #!/usr/bin/env, are looked up here", kind: searchPath, separators: ":"},
	// bash(1) INVOCATION: a non-interactive bash runs BASH_ENV first;
	// sh(1) (dash, bash --posix) runs ENV.
	"BASH_ENV": {what: "bash runs this file before the script", kind: onePath},
	"ENV":      {what: "sh runs this file before the script", kind: onePath},
	// python(1) ENVIRONMENT VARIABLES.
	"PYTHONPATH":          {what: "Python imports modules from here first", kind: searchPath, separators: ":"},
	"PYTHONHOME":          {what: "Python loads its standard library from here", kind: searchPath, separators: ":"},
	"PYTHONUSERBASE":      {what: "Python imports the user site-packages under it", kind: onePath},
	"PYTHONSTARTUP":       {what: "Python runs this file at an interactive start", kind: onePath},
	"PYTHONPYCACHEPREFIX": {what: "Python runs the compiled modules cached here", kind: onePath},
	// perlrun(1) ENVIRONMENT.
	"PERL5LIB": {what: "Perl loads modules from here first", kind: searchPath, separators: ":"},
	"PERLLIB":  {what: "Perl loads modules from here first", kind: searchPath, separators: ":"},
	"PERL5OPT": {what: "Perl takes these as command line options (-M, -I load code)", kind: unchecked},
	"PERL5DB":  {what: "Perl runs this code as its debugger", kind: unchecked},
	// ruby(1) ENVIRONMENT.
	"RUBYLIB":  {what: "Ruby loads libraries from here first", kind: searchPath, separators: ":"},
	"RUBYPATH": {what: "Ruby looks up scripts here", kind: searchPath, separators: ":"},
	"RUBYOPT":  {what: "Ruby takes these as command line options (-r, -I load code)", kind: unchecked},
	// node(1) ENVIRONMENT.
	"NODE_PATH":    {what: "Node.js loads modules from here", kind: searchPath, separators: ":"},
	"NODE_OPTIONS": {what: "Node.js takes these as command line options (--require, --import load code)", kind: unchecked},
	// The JVM's JAVA_TOOL_OPTIONS (JVMTI), _JAVA_OPTIONS and java(1)'s
	// JDK_JAVA_OPTIONS: -javaagent, -agentpath load code.
	"JAVA_TOOL_OPTIONS": {what: "the JVM takes these as options (-javaagent, -agentpath load code)", kind: unchecked},
	"_JAVA_OPTIONS":     {what: "the JVM takes these as options (-javaagent, -agentpath load code)", kind: unchecked},
	"JDK_JAVA_OPTIONS":  {what: "java takes these as options (-javaagent, -agentpath load code)", kind: unchecked},
}

// codeLoadingEnvPrefixes are families of variables with a version in their
// name: lua(1) ENVIRONMENT, LUA_INIT (code, or a file to run), LUA_PATH and
// LUA_CPATH (templates of module paths), and their _5_N variants.
var codeLoadingEnvPrefixes = map[string]envUse{
	"LUA_INIT":  {what: "Lua runs this code or file first", kind: unchecked},
	"LUA_PATH":  {what: "Lua loads modules from these templates", kind: unchecked},
	"LUA_CPATH": {what: "Lua loads C modules from these templates", kind: unchecked},
}

type envKind int

const (
	// onePath: one file or directory.
	onePath envKind = iota
	// searchPath: directories (or archives) to look in; an empty entry is
	// the working directory.
	searchPath
	// libraries: library files; a name without a slash is looked up in
	// the library search path, whose directories are trusted
	// (LD_LIBRARY_PATH is checked too).
	libraries
	// unchecked: options or code, which can name any path in any syntax:
	// refused.
	unchecked
)

// envUse is what a code-loading variable does with its value.
type envUse struct {
	what       string
	kind       envKind
	separators string
	// loader: the dynamic loader expands $ORIGIN, $LIB and $PLATFORM in
	// the value (ld.so(8), Dynamic string tokens).
	loader bool
}

// EnvError is an environment variable CheckEnv refuses.
type EnvError struct {
	// Name is the variable's name.
	Name string
	// Path is the path at fault, "" when the value cannot be checked at
	// all.
	Path string
	// Reason says what the variable makes run and why it is refused.
	Reason string
	// Err is the trust check that Path failed, if any.
	Err error
}

func (e *EnvError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Name, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Name, e.Reason)
}

func (e *EnvError) Unwrap() error { return e.Err }

// CheckEnv checks one environment variable of an Exec plugin: a variable
// that makes the dynamic loader or an interpreter load code (see
// codeLoadingEnv) passes only when every path it names passes the checks
// of an executable's path (CheckPath; relative paths are taken from /, the
// plugins' working directory), and is refused when its value cannot be
// checked. A path that does not exist passes when the directories that do
// exist on its way do: only root can create it, and it is checked again
// before every call. Any other variable passes. The error is an *EnvError.
func CheckEnv(name, value string) error {
	use, ok := codeLoadingEnv[name]
	if !ok {
		for prefix, u := range codeLoadingEnvPrefixes {
			if strings.HasPrefix(name, prefix) {
				use, ok = u, true
				break
			}
		}
	}
	if !ok {
		return nil
	}
	if use.kind == unchecked {
		return &EnvError{Name: name, Reason: use.what + ", which cannot be checked: set the interpreter's options on its #! line or in the plugin's args instead"}
	}
	if use.loader && strings.Contains(value, "$") {
		return &EnvError{Name: name, Reason: use.what + "; its value has a dynamic string token ($ORIGIN, $LIB, $PLATFORM) that cannot be checked: write the paths out"}
	}
	entries := []string{value}
	if use.separators != "" {
		entries = strings.FieldsFunc(value, func(r rune) bool { return strings.ContainsRune(use.separators, r) })
		if use.kind == searchPath && hasEmptyEntry(value, use.separators) {
			entries = append(entries, "")
		}
	}
	for _, entry := range entries {
		if use.kind == libraries && !strings.Contains(entry, "/") {
			continue // found in the trusted library search path
		}
		path := entry
		if !filepath.IsAbs(path) {
			path = filepath.Join(interpreterCwd, path)
		}
		if err := CheckPath(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &EnvError{Name: name, Path: path, Reason: use.what + ", and it is not trusted", Err: err}
		}
	}
	return nil
}

// hasEmptyEntry says whether a list has an empty entry, which search
// paths take as the working directory: a separator at either end, or two
// in a row.
func hasEmptyEntry(value, separators string) bool {
	if value == "" {
		return true
	}
	isSep := func(i int) bool { return strings.IndexByte(separators, value[i]) >= 0 }
	if isSep(0) || isSep(len(value)-1) {
		return true
	}
	for i := 1; i < len(value); i++ {
		if isSep(i) && isSep(i-1) {
			return true
		}
	}
	return false
}
