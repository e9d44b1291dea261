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

// Package strictjson decodes JSON strictly without reflection, for the
// decoders build/podtypes-gen generates (package corev1 of the SDK) and
// for the SDK's request envelope.
//
// It accepts exactly what sigs.k8s.io/json's UnmarshalStrict accepts into
// the same Go types, the kubelet's own decoding: case-sensitive keys, an
// unknown or duplicate field is an error naming its path, null leaves a
// value as it is (or sets a pointer, slice or map to nil), integers refuse
// fractions, exponents and overflow, and the input must be one JSON value
// with nothing but whitespace after it. Its syntax errors are
// encoding/json's, word for word.
//
// Why not encoding/json: an Exec plugin is a new process per call, and the
// first reflection-based decode in a process builds the field tables of
// every struct type it reaches, which for a Pod costs several times what
// the rest of the process does (docs/plugins.md).
//
// It imports the standard library only.
package strictjson
