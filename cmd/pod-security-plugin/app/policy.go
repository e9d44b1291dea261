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

package app

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corepod"
)

// ReasonPodSecurity is the pod status reason of a rejected pod, as the
// apiserver's admission plugin is named.
const ReasonPodSecurity = "PodSecurity"

// Policy enforces one Pod Security Standards level and version on the pods
// of a node, with the evaluator of the apiserver's PodSecurity admission,
// and the same kinds of exemptions. It is safe for concurrent use: the GRPC
// daemon decides on many pods at once.
type Policy struct {
	enforce   psaapi.LevelVersion
	evaluator policy.Evaluator

	exemptNamespaces     sets.Set[string]
	exemptRuntimeClasses sets.Set[string]
	exemptStaticPods     bool
}

// NewPolicy returns the policy o describes, or the errors of its flags.
func NewPolicy(o *Options) (*Policy, error) {
	enforce, err := o.levelVersion()
	if err != nil {
		return nil, err
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the Pod Security Standards checks: %w", err)
	}
	return &Policy{
		enforce:              enforce,
		evaluator:            evaluator,
		exemptNamespaces:     sets.New(o.ExemptNamespaces...),
		exemptRuntimeClasses: sets.New(o.ExemptRuntimeClasses...),
		exemptStaticPods:     o.ExemptStaticPods,
	}, nil
}

// Handle is the plugin's Handler, for either transport: the request is the
// same, static pods included. The exemptions read the SDK's Pod; only a pod
// they do not exempt is converted into k8s.io/api/core/v1's Pod, which the
// evaluator takes.
func (p *Policy) Handle(_ context.Context, req *plugin.Request) (*plugin.Response, error) {
	if p.exempt(req) {
		return plugin.Allow(), nil
	}
	pod, err := corepod.Pod(req)
	if err != nil {
		return nil, err
	}
	return p.admit(pod), nil
}

// exempt says whether the exemptions admit req's pod without checks.
func (p *Policy) exempt(req *plugin.Request) bool {
	pod := req.Pod
	return p.exemptNamespaces.Has(pod.Namespace) ||
		req.Static && p.exemptStaticPods ||
		pod.Spec.RuntimeClassName != nil && p.exemptRuntimeClasses.Has(*pod.Spec.RuntimeClassName)
}

// admit evaluates pod against the enforced level and version.
func (p *Policy) admit(pod *corev1.Pod) *plugin.Response {
	result := policy.AggregateCheckResults(p.evaluator.EvaluatePod(p.enforce, &pod.ObjectMeta, &pod.Spec))
	if result.Allowed {
		return plugin.Allow()
	}
	// The apiserver's message, so that "kubectl describe pod" reads the same
	// whichever of the two refused the pod.
	message := fmt.Sprintf("violates PodSecurity %q: %s", p.enforce.String(), result.ForbiddenDetail())
	return plugin.Deny(ReasonPodSecurity, protocol.TruncateMessage(message))
}
