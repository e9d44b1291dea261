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

package podadmission

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
)

// podMatcher is a plugin's match section, compiled once per configuration.
type podMatcher struct {
	namespaces        sets.Set[string] // empty: every namespace
	excludeNamespaces sets.Set[string]
	selector          labels.Selector
	source            configv1alpha1.PodSource
}

func newPodMatcher(m *configv1alpha1.PodMatch) (podMatcher, error) {
	if m == nil {
		m = &configv1alpha1.PodMatch{}
	}
	selector := labels.Everything()
	if m.PodSelector != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(m.PodSelector); err != nil {
			return podMatcher{}, fmt.Errorf("match.podSelector: %w", err)
		}
	}
	return podMatcher{
		namespaces:        sets.New(m.Namespaces...),
		excludeNamespaces: sets.New(m.ExcludeNamespaces...),
		selector:          selector,
		source:            m.PodSource,
	}, nil
}

// matches says whether the plugin sees pod; static says whether the pod
// comes from a static manifest.
func (m podMatcher) matches(pod *v1.Pod, static bool) bool {
	switch m.source {
	case configv1alpha1.APIPodSource:
		if static {
			return false
		}
	case configv1alpha1.StaticPodSource:
		if !static {
			return false
		}
	}
	if m.namespaces.Len() > 0 && !m.namespaces.Has(pod.Namespace) {
		return false
	}
	if m.excludeNamespaces.Has(pod.Namespace) {
		return false
	}
	return m.selector.Matches(labels.Set(pod.Labels))
}
