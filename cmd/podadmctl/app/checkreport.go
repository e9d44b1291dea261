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
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
)

// Verdicts of check: what the kubelet does with the pod.
const (
	// VerdictAdmitted: the pod starts.
	VerdictAdmitted = "Admitted"
	// VerdictBlocked: a soft rejection; the pod stays Pending and is
	// evaluated again.
	VerdictBlocked = "Blocked"
	// VerdictRejected: a hard rejection; the pod fails.
	VerdictRejected = "Rejected"
)

// checkReport is the output of check; its JSON form is -o json.
type checkReport struct {
	// Pod is namespace/name as the kubelet names the pod.
	Pod    string `json:"pod"`
	Static bool   `json:"static"`
	// Update: the request was an Update of a running pod (--old).
	Update bool `json:"update,omitempty"`
	// Admitted says whether the pod starts.
	Admitted bool `json:"admitted"`
	// Verdict is Admitted, Blocked or Rejected.
	Verdict string `json:"verdict"`
	// RejectedBy is the plugin whose rejection decides.
	RejectedBy string `json:"rejectedBy,omitempty"`
	// Reason and Message are the pod's status.reason and status.message
	// when it is not admitted.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Plugins are the decisions of every plugin, in chain order.
	Plugins []pluginReport `json:"plugins"`
}

type pluginReport struct {
	Name          string                       `json:"name"`
	Type          configv1alpha1.PluginType    `json:"type"`
	File          string                       `json:"file"`
	FailurePolicy configv1alpha1.FailurePolicy `json:"failurePolicy"`
	RejectionMode configv1alpha1.RejectionMode `json:"rejectionMode"`
	// Decision is the chain's outcome: Allowed, Rejected, Failed,
	// FailureIgnored or NotMatched.
	Decision podadmission.Outcome `json:"decision"`
	Reason   string               `json:"reason,omitempty"`
	Message  string               `json:"message,omitempty"`
	// Error is the failure of a plugin that could not decide.
	Error string `json:"error,omitempty"`
	// Stderr is the end of what a failed Exec plugin wrote to stderr, which
	// the kubelet logs and never puts in the pod's status.
	Stderr            string `json:"stderr,omitempty"`
	RetryAfterSeconds *int64 `json:"retryAfterSeconds,omitempty"`
	// LatencySeconds is the duration of the call; 0 when not called.
	LatencySeconds float64 `json:"latencySeconds"`
	// AfterRejection marks a plugin after the deciding rejection: the
	// kubelet would not have called it.
	AfterRejection bool `json:"afterRejection,omitempty"`

	latency time.Duration
}

func newCheckReport(pod *v1.Pod, static, update bool, result *podadmission.ChainResult) *checkReport {
	r := &checkReport{
		Pod:      pod.Namespace + "/" + pod.Name,
		Static:   static,
		Update:   update,
		Admitted: result.Admitted(),
		Verdict:  VerdictAdmitted,
		Plugins:  []pluginReport{},
	}
	if d := result.Rejection; d != nil {
		r.Verdict = VerdictBlocked
		// A rejected update is held whatever the rejectionMode: failing
		// the pod would stop what runs.
		if d.Plugin.RejectionMode == configv1alpha1.RejectionModeHard && !update {
			r.Verdict = VerdictRejected
		}
		r.RejectedBy = d.Plugin.Name
		r.Reason, r.Message = d.PodReason(), d.PodMessage()
	}
	afterRejection := false
	for i := range result.Decisions {
		d := &result.Decisions[i]
		p := pluginReport{
			Name:           d.Plugin.Name,
			Type:           d.Plugin.Type,
			File:           d.Plugin.File,
			FailurePolicy:  d.Plugin.FailurePolicy,
			RejectionMode:  d.Plugin.RejectionMode,
			Decision:       d.Outcome,
			Reason:         d.Reason,
			Message:        d.Message,
			LatencySeconds: d.Latency.Seconds(),
			AfterRejection: afterRejection,
			latency:        d.Latency,
		}
		if d.Err != nil {
			p.Error, p.Stderr = d.Err.Error(), podadmission.PluginStderr(d.Err)
		}
		if d.RetryAfter != nil {
			seconds := int64(d.RetryAfter.Seconds())
			p.RetryAfterSeconds = &seconds
		}
		r.Plugins = append(r.Plugins, p)
		if d == result.Rejection {
			afterRejection = true
		}
	}
	return r
}

func (r *checkReport) printJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *checkReport) printTable(w io.Writer) error {
	if len(r.Plugins) == 0 {
		fmt.Fprintln(w, "No plugins configured.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PLUGIN\tTYPE\tDECISION\tREASON\tLATENCY\tMESSAGE")
		for _, p := range r.Plugins {
			decision := string(p.Decision)
			if p.AfterRejection {
				decision += " (not called by the kubelet)"
			}
			latency := "-"
			if p.Decision != podadmission.OutcomeNotMatched {
				latency = p.latency.Round(100 * time.Microsecond).String()
			}
			message := p.Message
			if p.Error != "" {
				message = p.Error
			}
			if p.Stderr != "" {
				message += "; stderr: " + p.Stderr
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Type, decision, dash(p.Reason), latency, oneLine(message))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	switch {
	case r.Update && r.Verdict == VerdictAdmitted:
		_, err := fmt.Fprintf(w, "%s: Admitted: the update's new containers start.\n", r.Pod)
		return err
	case r.Update:
		_, err := fmt.Fprintf(w, "%s: Blocked by plugin %q: the update's new containers are not started, what runs keeps running; re-evaluated until admitted.\n  reason:  %s\n  message: %s\n",
			r.Pod, r.RejectedBy, r.Reason, r.Message)
		return err
	}
	switch r.Verdict {
	case VerdictAdmitted:
		_, err := fmt.Fprintf(w, "%s: Admitted: the pod starts.\n", r.Pod)
		return err
	case VerdictBlocked:
		_, err := fmt.Fprintf(w, "%s: Blocked by plugin %q: the pod stays Pending, re-evaluated until admitted.\n  reason:  %s\n  message: %s\n",
			r.Pod, r.RejectedBy, r.Reason, r.Message)
		return err
	default:
		_, err := fmt.Fprintf(w, "%s: Rejected by plugin %q (rejectionMode Hard): the pod fails.\n  reason:  %s\n  message: %s\n",
			r.Pod, r.RejectedBy, r.Reason, r.Message)
		return err
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a message on its table row.
func oneLine(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Join(strings.Fields(s), " ")
}
