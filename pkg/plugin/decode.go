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

package plugin

import (
	"bytes"
	"fmt"

	"github.com/podadmission/podadmission/pkg/apis/podadmission/v1alpha1/protocol"
	"github.com/podadmission/podadmission/pkg/plugin/corev1"
	"github.com/podadmission/podadmission/pkg/plugin/internal/strictjson"
)

// DecodeRequest decodes data, a request in the protocol's JSON form (what
// an Exec plugin reads on its stdin), and checks it (Request.Validate).
// HandleExec calls it.
//
// Decoding is strict, as the kubelet decodes its own objects: a field the
// protocol or the pod's types do not know, anywhere, is an error, and so
// are a duplicate field, a key in the wrong case and a value of the wrong
// type, each naming its path (pod.spec.containers[0].image). So a plugin
// built against an older k8s.io/api than the kubelet's fails on a pod
// field it does not know, and the kubelet applies its failurePolicy,
// rather than the plugin judging the pod without that field. Its
// decoders are generated (package corev1): no reflection, no
// k8s.io/apimachinery, so that a plugin process pays for what it reads.
func DecodeRequest(data []byte) (*Request, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("invalid request: empty, want a %s JSON object", protocol.RequestKind)
	}
	var e envelope
	if err := strictjson.Decode(data, e.decodeJSON); err != nil {
		return nil, fmt.Errorf("invalid request: %w", err)
	}
	if e.apiVersion != protocol.APIVersion {
		return nil, fmt.Errorf("invalid request: apiVersion %s is not supported, want %q", protocol.Quote(e.apiVersion), protocol.APIVersion)
	}
	if e.kind != protocol.RequestKind {
		return nil, fmt.Errorf("invalid request: kind %s must be %q", protocol.Quote(e.kind), protocol.RequestKind)
	}
	req := &e.req
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Operation == "" {
		// The kubelet leaves Create out (see Operation).
		req.Operation = OperationCreate
	}
	return req, nil
}

// envelope is a request in its JSON form: the Request and the apiVersion
// and kind around it.
type envelope struct {
	apiVersion, kind string
	req              Request
}

func (e *envelope) decodeJSON(d *strictjson.Decoder) {
	if !d.BeginObject() {
		return
	}
	var seen uint64
	for i := 0; d.NextKey(i); i++ {
		switch string(d.Key()) {
		case "apiVersion":
			d.Field(&seen, 1<<0, "apiVersion")
			e.apiVersion = d.String()
		case "kind":
			d.Field(&seen, 1<<1, "kind")
			e.kind = d.String()
		case "uid":
			d.Field(&seen, 1<<2, "uid")
			e.req.UID = corev1.UID(d.String())
		case "pod":
			d.Field(&seen, 1<<3, "pod")
			e.req.Pod, e.req.PodJSON = decodePod(d)
		case "node":
			d.Field(&seen, 1<<4, "node")
			e.req.Node.decodeJSON(d)
		case "static":
			d.Field(&seen, 1<<5, "static")
			e.req.Static = d.Bool()
		case "attempt":
			d.Field(&seen, 1<<6, "attempt")
			e.req.Attempt = d.Int32()
		case "operation":
			d.Field(&seen, 1<<7, "operation")
			e.req.Operation = Operation(d.String())
		case "oldPod":
			d.Field(&seen, 1<<8, "oldPod")
			e.req.OldPod, e.req.OldPodJSON = decodePod(d)
		default:
			d.Unknown()
			continue
		}
		d.Pop()
	}
}

// decodePod decodes the pod at d and returns it with its JSON; nil for
// null.
func decodePod(d *strictjson.Decoder) (*corev1.Pod, []byte) {
	if d.Null() {
		return nil, nil
	}
	raw := d.Raw()
	if raw == nil {
		return nil, nil
	}
	pod := &corev1.Pod{}
	d.Include(pod.UnmarshalJSON(raw))
	return pod, raw
}

func (n *NodeInfo) decodeJSON(d *strictjson.Decoder) {
	if !d.BeginObject() {
		return
	}
	var seen uint64
	for i := 0; d.NextKey(i); i++ {
		switch string(d.Key()) {
		case "name":
			d.Field(&seen, 1<<0, "name")
			n.Name = d.String()
		case "labels":
			d.Field(&seen, 1<<1, "labels")
			if d.BeginObject() {
				labels := map[string]string{}
				for j := 0; d.NextKey(j); j++ {
					k := string(d.Key())
					_, dup := labels[k]
					d.Entry(k, dup)
					labels[k] = d.String()
					d.Pop()
				}
				n.Labels = labels
			}
		case "nodeInfo":
			d.Field(&seen, 1<<2, "nodeInfo")
			if !d.Null() {
				if raw := d.Raw(); raw != nil {
					d.Include(n.NodeInfo.UnmarshalJSON(raw))
				}
			}
		default:
			d.Unknown()
			continue
		}
		d.Pop()
	}
}
