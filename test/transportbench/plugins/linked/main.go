// Command linked is the minimal plugin (plugins/minimal) with the SDK
// linked in but not called: what an Exec plugin pays at every start for the
// packages the SDK brings (k8s.io/api and its dependencies: their
// initialisation, a larger binary), before it decodes anything.
package main

import (
	_ "github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/test/transportbench/plugins/stdlibanswer"
)

func main() { stdlibanswer.Run() }
