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
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/podadmission/podadmission/pkg/plugin"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// handler answers requests in the modes that are valid protocol: allow,
// deny, sleep, and whatever the decision file says.
func (o *options) handler(ctx context.Context, req *plugin.Request) (*plugin.Response, error) {
	if err := o.logCall(req); err != nil {
		return nil, err
	}
	if image, ok := o.deniedImage(req.Pod); ok {
		return o.deny(reasonImageNotAllowed, fmt.Sprintf("image %q is not allowed on this node", image)), nil
	}
	if o.decisionFile != "" {
		return o.decideFromFile()
	}
	switch o.mode {
	case modeDeny:
		return o.deny(o.reason, o.message), nil
	case modeSleep:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(24 * time.Hour):
			return nil, fmt.Errorf("slept for a day")
		}
	default:
		return plugin.Allow(), nil
	}
}

func (o *options) deny(reason, message string) *plugin.Response {
	if o.retryAfter > 0 {
		return plugin.DenyRetryAfter(reason, message, o.retryAfter)
	}
	return plugin.Deny(reason, message)
}

// decideFromFile reads "allow" or "deny <Reason> <message...>".
func (o *options) decideFromFile() (*plugin.Response, error) {
	data, err := os.ReadFile(o.decisionFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the decision file: %w", err)
	}
	fields := strings.Fields(string(data))
	switch {
	case len(fields) == 1 && fields[0] == "allow":
		return plugin.Allow(), nil
	case len(fields) >= 2 && fields[0] == "deny":
		return o.deny(fields[1], strings.Join(fields[2:], " ")), nil
	}
	return nil, fmt.Errorf(`decision file %s: want "allow" or "deny <Reason> <message>", got %q`, o.decisionFile, strings.TrimSpace(string(data)))
}

// reasonImageNotAllowed is the reason of a rejection by --deny-images.
const reasonImageNotAllowed = "ImageNotAllowed"

// deniedImage returns the first image of pod's containers, init containers
// or ephemeral containers that --deny-images names.
func (o *options) deniedImage(pod *corev1.Pod) (string, bool) {
	if len(o.denyImages) == 0 {
		return "", false
	}
	var images []string
	for _, c := range pod.Spec.InitContainers {
		images = append(images, c.Image)
	}
	for _, c := range pod.Spec.Containers {
		images = append(images, c.Image)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		images = append(images, c.Image)
	}
	for _, image := range images {
		if slices.Contains(o.denyImages, image) {
			return image, true
		}
	}
	return "", false
}

// logCall appends one line about req to the log file, if there is one.
func (o *options) logCall(req *plugin.Request) error {
	if o.logFile == "" {
		return nil
	}
	f, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cannot open the log file: %w", err)
	}
	// One write per line: appends of one small write do not interleave.
	line := fmt.Sprintf("%s/%s uid=%s attempt=%d static=%t", req.Pod.Namespace, req.Pod.Name, req.Pod.UID, req.Attempt, req.Static)
	if req.Operation == plugin.OperationUpdate {
		line += " operation=Update"
	}
	line += "\n"
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the log file: %w", err)
	}
	return f.Close()
}
