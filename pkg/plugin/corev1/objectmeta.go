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

package corev1

// GetName returns the object's name: with GetNamespace, what klog.KObj
// needs to log a pod.
func (m *ObjectMeta) GetName() string { return m.Name }

// GetNamespace returns the object's namespace.
func (m *ObjectMeta) GetNamespace() string { return m.Namespace }
