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

import (
	"fmt"
	"sort"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	podv1 "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// policyRef is one NetworkPolicy at one generation: what an agent
// acknowledges and what a pod waits for.
type policyRef struct {
	UID        types.UID
	Namespace  string
	Name       string
	Generation int64
	// ChangedAt is when the API server last wrote the policy: its creation
	// or the newest managedFields entry (used for the settle time).
	ChangedAt time.Time
}

func (p policyRef) String() string {
	return fmt.Sprintf("%s/%s (generation %d)", p.Namespace, p.Name, p.Generation)
}

func refOf(np *networkingv1.NetworkPolicy) policyRef {
	changedAt := np.CreationTimestamp.Time
	for _, mf := range np.ManagedFields {
		if mf.Time != nil && mf.Time.After(changedAt) {
			changedAt = mf.Time.Time
		}
	}
	return policyRef{UID: np.UID, Namespace: np.Namespace, Name: np.Name, Generation: np.Generation, ChangedAt: changedAt}
}

// selects says whether np isolates pod: a NetworkPolicy applies to the pods
// of its own namespace that its spec.podSelector selects (an empty selector
// selects them all), whatever its policyTypes.
func selects(np *networkingv1.NetworkPolicy, pod *podv1.Pod) (bool, error) {
	if np.Namespace != pod.Namespace {
		return false, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		return false, fmt.Errorf("NetworkPolicy %s/%s: spec.podSelector: %w", np.Namespace, np.Name, err)
	}
	return selector.Matches(labels.Set(pod.Labels)), nil
}

// mergePolicies returns the policies of cached and extra by uid, keeping the
// newer generation of a policy in both.
func mergePolicies(cached, extra []*networkingv1.NetworkPolicy) []*networkingv1.NetworkPolicy {
	byUID := make(map[types.UID]*networkingv1.NetworkPolicy, len(cached)+len(extra))
	for _, list := range [][]*networkingv1.NetworkPolicy{cached, extra} {
		for _, np := range list {
			if have, ok := byUID[np.UID]; !ok || np.Generation > have.Generation {
				byUID[np.UID] = np
			}
		}
	}
	merged := make([]*networkingv1.NetworkPolicy, 0, len(byUID))
	for _, np := range byUID {
		merged = append(merged, np)
	}
	return merged
}

// sortRefs orders refs by namespace and name, for stable messages.
func sortRefs(refs []policyRef) {
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Namespace != refs[j].Namespace {
			return refs[i].Namespace < refs[j].Namespace
		}
		return refs[i].Name < refs[j].Name
	})
}

func joinRefs(refs []policyRef) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}
