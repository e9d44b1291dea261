// Command minimal is the smallest valid Exec plugin in Go: it admits every
// pod, using only the standard library. The benchmark runs it as the bare
// reference (fork+exec, the request on stdin, the answer on stdout, nothing
// of the kubelet's around it) and through the kubelet's Exec transport.
package main

import "github.com/podadmission/podadmission/test/transportbench/plugins/stdlibanswer"

func main() { stdlibanswer.Run() }
