//go:build testplugin_exec

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

import "errors"

// Built with -tags testplugin_exec the test plugin is an Exec plugin only:
// it links no GRPC server, whose packages (gRPC, protobuf, about 110 of
// them) every Exec call would otherwise initialise, and so it starts as
// an Exec plugin written with the SDK does. The node e2e suite installs
// this build as its Exec plugins and runs the full one with --serve.
func runGRPC(*options) {
	fail(errors.New("--serve: this testplugin is built with -tags testplugin_exec, without the GRPC server; run the testplugin built without the tag"))
}
