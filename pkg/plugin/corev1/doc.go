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

// Package corev1 is the Pod of k8s.io/api/core/v1 as plugins receive it:
// the same type names, fields and JSON, generated without
// k8s.io/apimachinery (build/podtypes-gen, from the k8s.io/api version the
// file header names), with a strict decoder generated for them that uses no
// reflection. So pod.Namespace, pod.Spec.HostNetwork and
// pod.Spec.EphemeralContainers[0].Image read as they do with
// k8s.io/api/core/v1, and the typed constants of its types are here too
// (RestartPolicyAlways, ResourceCPU, ...).
//
// Why: an Exec plugin is a new process per call. k8s.io/api/core/v1
// brings about 200 packages through apimachinery, whose initialisation runs
// at every start, and the first reflection-based decode of a Pod in a
// process builds the field tables of every type it reaches; together they
// cost a plugin several times what its process costs (docs/plugins.md).
// This package imports the standard library only (and the SDK's internal
// JSON scanner, which does too).
//
// Decoding is as strict as the kubelet's decoding of its own objects
// (sigs.k8s.io/json's UnmarshalStrict): a field the types do not know,
// anywhere in the pod, is an error naming its path, and so are a
// duplicate field, a key in the wrong case and a value of the wrong type.
// A plugin built against an older k8s.io/api than the kubelet's fails on a
// pod field it does not know, rather than judging the pod without it: the
// kubelet then applies the plugin's failurePolicy (Fail holds the pod).
// Pod and NodeSystemInfo decode strictly with encoding/json too (their
// UnmarshalJSON).
//
// The types of k8s.io/apimachinery a Pod holds are the package's own,
// written by hand, with the JSON of the originals:
//
//   - Quantity (resource.Quantity) is the quantity's text, checked with
//     apimachinery's syntax: what the kubelet sends, which is the canonical
//     form apimachinery's String returns. It has no arithmetic; a plugin
//     that needs it gets the pod from package corepod and uses
//     resource.Quantity.
//   - Time (metav1.Time) is a time.Time, RFC 3339 in JSON, null for the
//     zero time; it keeps the zone it was parsed in (UTC for the kubelet's
//     times) where metav1.Time converts to the local zone.
//   - IntOrString (intstr.IntOrString), UID (types.UID) and FieldsV1
//     (metav1.FieldsV1, kept as raw JSON).
//
// The types have no methods of their own beyond these (no DeepCopy, no
// accessors but ObjectMeta's GetName and GetNamespace, for klog.KObj).
// A plugin that hands the pod to Kubernetes libraries gets the
// k8s.io/api/core/v1 Pod of its request from package corepod, and pays for
// those libraries at every start.
package corev1
