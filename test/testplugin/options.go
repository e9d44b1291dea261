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

package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Modes of the test plugin; see the package documentation.
const (
	modeAllow           = "allow"
	modeDeny            = "deny"
	modeSleep           = "sleep"
	modeCrash           = "crash"
	modeGarbage         = "garbage"
	modeHuge            = "huge"
	modeWrongAPIVersion = "wrong-api-version"
	modeForkSleep       = "fork-sleep"
)

var modes = []string{modeAllow, modeDeny, modeSleep, modeCrash, modeGarbage, modeHuge, modeWrongAPIVersion, modeForkSleep}

type options struct {
	mode         string
	reason       string
	message      string
	retryAfter   time.Duration
	decisionFile string
	logFile      string
	serve        string
	push         string
	denyImages   []string
	hold         time.Duration
}

// Ways to push re-evaluations when the decision file changes (GRPC mode).
const (
	pushAll  = "all"
	pushPods = "pods"
)

// execOnlyModes break the protocol in ways only a process can.
var execOnlyModes = []string{modeGarbage, modeHuge, modeWrongAPIVersion, modeForkSleep}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.mode, "mode", modeAllow, fmt.Sprintf("behaviour, one of %v", modes))
	fs.StringVar(&o.reason, "reason", "DeniedByTestPlugin", "reason of a rejection")
	fs.StringVar(&o.message, "message", "the test plugin denies this pod", "message of a rejection")
	fs.DurationVar(&o.retryAfter, "retry-after", 0, "retryAfterSeconds of a rejection (rounded up to seconds; 0: unset)")
	fs.StringVar(&o.decisionFile, "decision-file", "", `file read at every call: "allow" or "deny <Reason> <message>"; overrides --mode`)
	fs.StringVar(&o.logFile, "log-file", "", "file to append one line to per call")
	fs.StringVar(&o.serve, "serve", "", "serve as a GRPC plugin daemon on this unix socket (unix:///path or /path) instead of answering one Exec call")
	fs.Func("deny-images", "comma-separated images: a pod with a container, init container or ephemeral container of one of them is denied (reason ImageNotAllowed) before --mode or --decision-file decide", func(v string) error {
		o.denyImages = append(o.denyImages, strings.Split(v, ",")...)
		return nil
	})
	fs.DurationVar(&o.hold, "hold", 0, "with --serve and --mode=allow: deny every pod (with --reason, --message, --retry-after) until this long after its first call, then push its re-evaluation and admit it")
	fs.StringVar(&o.push, "push", pushPods, `with --serve and --decision-file, what to ask the kubelet to evaluate again when the file changes: "pods" (the pods denied since the last change) or "all"`)
}

func (o *options) validate() error {
	if !slices.Contains(modes, o.mode) {
		return fmt.Errorf("unknown --mode %q, want one of %v", o.mode, modes)
	}
	if o.serve != "" && slices.Contains(execOnlyModes, o.mode) {
		return fmt.Errorf("--mode=%s is an Exec behaviour, it cannot be used with --serve", o.mode)
	}
	if o.hold < 0 || (o.hold > 0 && (o.serve == "" || o.mode != modeAllow || o.decisionFile != "")) {
		return fmt.Errorf("--hold needs --serve and --mode=allow without --decision-file, and a positive duration")
	}
	if o.push != pushAll && o.push != pushPods {
		return fmt.Errorf("unknown --push %q, want %q or %q", o.push, pushPods, pushAll)
	}
	return nil
}
