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

// Command testplugin is a pod admission plugin whose behaviour tests choose
// with flags. It is built with the SDK (pkg/plugin) and runs as an Exec
// plugin, or as a GRPC plugin daemon with --serve.
//
//	--mode=allow|deny|sleep|crash|garbage|huge|wrong-api-version|fork-sleep
//	    allow, deny: answer so (deny uses --reason, --message, --retry-after).
//	    sleep: never answer; wait until the call is given up.
//	    crash: write "testplugin: crashing as asked" to stderr, exit 3.
//	    garbage: write "this is not a PodAdmissionResponse" to stdout.
//	    huge: write 10 MB to stdout.
//	    wrong-api-version: answer allowed with apiVersion
//	        podadmission.kubelet.k8s.io/v1.
//	    fork-sleep: start a "sleep 3600" child that shares stdout, write
//	        "testplugin: pid <pid> forked child pid <pid>" to stderr (the
//	        pids the host sees), never answer.
//	--decision-file=PATH: read the decision at every call from PATH:
//	    "allow" or "deny <Reason> <message...>"; overrides --mode.
//	--deny-images=IMAGE,...: deny a pod with a container, init container or
//	    ephemeral container of one of these images (reason ImageNotAllowed),
//	    before --mode or --decision-file decide.
//	--log-file=PATH: append one line per call answered by the handler (allow,
//	    deny, sleep, --decision-file):
//	    "<namespace>/<name> uid=<pod uid> attempt=<n> static=<bool>", and
//	    " operation=Update" for an update of an admitted pod.
//
//	--serve=unix:///PATH: run as a GRPC plugin daemon on that socket until
//	    SIGTERM or SIGINT, instead of answering one Exec call.
//	--push=pods|all: in GRPC mode with --decision-file, the file is watched;
//	    when it changes the daemon asks the kubelet to evaluate again the pods
//	    it denied since the last change (pods), or every pod it blocks (all).
//	--hold=DURATION: in GRPC mode with --mode=allow, every pod is denied
//	    (--reason, --message, --retry-after) until DURATION after the first
//	    call for it; then the daemon pushes its re-evaluation and admits it
//	    (then and on every later call).
//	    Upstream's node e2e suite runs with it to see every pod held first.
//
// In GRPC mode crash exits the daemon in the middle of a call; garbage,
// huge, wrong-api-version and fork-sleep are Exec behaviours and are refused.
//
// Built with -tags testplugin_exec it is an Exec plugin only (no --serve),
// as lean as an Exec plugin written with the SDK.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	o.addFlags(flag.CommandLine)
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "testplugin: %v\n", err)
		os.Exit(2)
	}
	if o.serve != "" {
		runGRPC(&o)
		return
	}
	runExec(&o)
}
