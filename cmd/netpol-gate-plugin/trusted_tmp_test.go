package main

import "github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust/trusttest"

// The kubelet's GRPC transport talks only to sockets in trusted
// directories, and t.TempDir() is under /tmp, which is world writable.
func init() { trusttest.UseTrustedTempDir() }
