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

// Package app is pod-security-plugin's policy and its flags, shared by the
// Exec plugin (cmd/pod-security-plugin) and the GRPC plugin daemon
// (cmd/pod-security-plugin-grpc), so that both decide alike.
//
// It must not import the SDK's GRPC server (pkg/plugin/grpcplugin): the
// Exec plugin starts a process for every call and pays for every package
// it links at every start.
package app
