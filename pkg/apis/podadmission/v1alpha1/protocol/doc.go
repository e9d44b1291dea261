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

// Package protocol holds the rules of the pod admission plugin protocol,
// podadmission.kubelet.k8s.io/v1alpha1, that both of its sides apply: the
// kubelet (package v1alpha1, its transports and its chain) and the SDK that
// plugins import (package plugin). Each rule is defined here once, so that
// the kubelet's checks of a response and the SDK's are one implementation.
//
// It imports the standard library and apimachinery's field errors only
// (whose package initialisation is negligible): an Exec plugin starts once
// per call and pays for every package it links at every start, so the SDK
// must not reach k8s.io/api through it.
package protocol
