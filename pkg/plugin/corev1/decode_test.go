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

package corev1_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"

	lean "github.com/podadmission/podadmission/pkg/plugin/corev1"
)

// upstreamRefuses says whether the kubelet's decoding (sigs.k8s.io/json's
// UnmarshalStrict into k8s.io/api/core/v1) refuses data.
func upstreamRefuses(data []byte) bool {
	strictErrs, err := sigsjson.UnmarshalStrict(data, &corev1.Pod{})
	return err != nil || len(strictErrs) > 0
}

// TestPodDecodingIsStrict: every fault a pod can have is refused, with a
// message naming its path, as the kubelet's own decoding refuses it.
func TestPodDecodingIsStrict(t *testing.T) {
	for name, tc := range map[string]struct {
		data    string
		wantErr string
	}{
		"unknown field at the top":                {data: `{"specs":{}}`, wantErr: `unknown field "specs"`},
		"unknown field in the metadata":           {data: `{"metadata":{"name":"web","nmae":"web"}}`, wantErr: `unknown field "metadata.nmae"`},
		"unknown field in a container":            {data: `{"spec":{"containers":[{"name":"a"},{"name":"b","imagePulPolicy":"Always"}]}}`, wantErr: `unknown field "spec.containers[1].imagePulPolicy"`},
		"unknown field deep down":                 {data: `{"spec":{"containers":[{"securityContext":{"capabilities":{"add":["NET_ADMIN"],"remove":["ALL"]}}}]}}`, wantErr: `unknown field "spec.containers[0].securityContext.capabilities.remove"`},
		"unknown field of an inline struct":       {data: `{"spec":{"volumes":[{"name":"v","hostPath":{"path":"/","kind":"x"}}]}}`, wantErr: `unknown field "spec.volumes[0].hostPath.kind"`},
		"unknown field in a probe handler":        {data: `{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":80},"udp":{}}}]}}`, wantErr: `unknown field "spec.containers[0].livenessProbe.udp"`},
		"unknown field of an ephemeral container": {data: `{"spec":{"ephemeralContainers":[{"name":"debug","image":"busybox","privileged":true}]}}`, wantErr: `unknown field "spec.ephemeralContainers[0].privileged"`},
		"field in the wrong case":                 {data: `{"spec":{"hostnetwork":true}}`, wantErr: `unknown field "spec.hostnetwork"`},
		"field name in Go's case":                 {data: `{"Spec":{}}`, wantErr: `unknown field "Spec"`},
		"duplicate field":                         {data: `{"spec":{"hostNetwork":false,"hostNetwork":true}}`, wantErr: `duplicate field "spec.hostNetwork"`},
		"duplicate field spelt otherwise":         {data: `{"spec":{"hostNetwork":false,"host\u004eetwork":true}}`, wantErr: `duplicate field "spec.hostNetwork"`},
		"duplicate label":                         {data: `{"metadata":{"labels":{"app":"a","app":"b"}}}`, wantErr: `duplicate field "metadata.labels.app"`},
		"duplicate resource":                      {data: `{"spec":{"containers":[{"resources":{"limits":{"cpu":"1","cpu":"2"}}}]}}`, wantErr: `duplicate field "spec.containers[0].resources.limits.cpu"`},
		"string for a boolean":                    {data: `{"spec":{"hostNetwork":"true"}}`, wantErr: "spec.hostNetwork: want a boolean, got a string"},
		"object for a list":                       {data: `{"spec":{"containers":{"name":"a"}}}`, wantErr: "spec.containers: want an array, got an object"},
		"fraction for an integer":                 {data: `{"spec":{"containers":[{"ports":[{"containerPort":80.5}]}]}}`, wantErr: "spec.containers[0].ports[0].containerPort: want a 32-bit integer, got 80.5"},
		"integer overflow":                        {data: `{"spec":{"priority":2147483648}}`, wantErr: "spec.priority: want a 32-bit integer, got 2147483648"},
		"invalid quantity":                        {data: `{"spec":{"containers":[{"resources":{"limits":{"cpu":"1 core"}}}]}}`, wantErr: `spec.containers[0].resources.limits.cpu: invalid quantity "1 core": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		"invalid quantity suffix":                 {data: `{"spec":{"overhead":{"memory":"1mi"}}}`, wantErr: `spec.overhead.memory: invalid quantity "1mi": unable to parse quantity's suffix`},
		"quantity of another kind":                {data: `{"spec":{"overhead":{"memory":true}}}`, wantErr: "spec.overhead.memory: want a quantity, got a boolean"},
		"invalid time":                            {data: `{"metadata":{"creationTimestamp":"yesterday"}}`, wantErr: `metadata.creationTimestamp: invalid time: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		"time as a number":                        {data: `{"metadata":{"creationTimestamp":1700000000}}`, wantErr: "metadata.creationTimestamp: want an RFC 3339 time string, got a number"},
		"port neither int nor string":             {data: `{"spec":{"containers":[{"readinessProbe":{"tcpSocket":{"port":true}}}]}}`, wantErr: "spec.containers[0].readinessProbe.tcpSocket.port: want an integer or a string, got a boolean"},
		"port out of range":                       {data: `{"spec":{"containers":[{"readinessProbe":{"tcpSocket":{"port":1e3}}}]}}`, wantErr: "spec.containers[0].readinessProbe.tcpSocket.port: want a 32-bit integer, got 1e3"},
		"trailing data":                           {data: `{"spec":{}} {"spec":{}}`, wantErr: "not JSON: invalid character '{' after top-level value"},
		"invalid JSON":                            {data: `{"spec":{"containers":[{"name":"a",}]}}`, wantErr: "spec.containers[0]: not JSON: invalid character '}' looking for beginning of object key string"},
		"truncated":                               {data: `{"spec":{"containers":[{"name":"a"`, wantErr: "spec.containers[0]: not JSON: unexpected end of JSON input"},
		"not an object":                           {data: `"pod"`, wantErr: "want an object, got a string"},
		"several faults": {
			data:    `{"spec":{"hostNetwork":1,"a":1},"metadata":{"name":"x","name":"y"},"status":{"b":1}}`,
			wantErr: `spec.hostNetwork: want a boolean, got a number, unknown field "spec.a", duplicate field "metadata.name", unknown field "status.b"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var pod lean.Pod
			require.EqualError(t, pod.UnmarshalJSON([]byte(tc.data)), tc.wantErr)
			assert.True(t, upstreamRefuses([]byte(tc.data)), "the kubelet's decoding refuses it too")
		})
	}
}

func TestPodDecodingAccepts(t *testing.T) {
	var pod lean.Pod
	require.NoError(t, json.Unmarshal([]byte(`{
		"metadata": {"name": "web", "namespace": "team-a", "uid": "p-1", "creationTimestamp": "2026-11-29T10:00:00Z", "deletionTimestamp": null,
			"managedFields": [{"manager": "kubectl", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]},
		"spec": {
			"hostNetwork": true, "nodeName": null, "tolerations": [],
			"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
				"resources": {"limits": {"cpu": "100m", "memory": 128974848}, "requests": {"cpu": " 0.5 "}},
				"livenessProbe": {"httpGet": {"port": "http"}}, "readinessProbe": {"tcpSocket": {"port": 8080}}}],
			"ephemeralContainers": [{"name": "debug", "image": "busybox", "targetContainerName": "web"}]
		}
	}`), &pod))
	assert.Equal(t, "team-a", pod.Namespace)
	assert.Equal(t, "web", pod.GetName())
	assert.Equal(t, lean.UID("p-1"), pod.UID)
	assert.True(t, pod.CreationTimestamp.Equal(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)))
	assert.Nil(t, pod.DeletionTimestamp)
	assert.JSONEq(t, `{"f:metadata":{"f:labels":{}}}`, string(pod.ManagedFields[0].FieldsV1.Raw))
	assert.True(t, pod.Spec.HostNetwork)
	assert.NotNil(t, pod.Spec.Tolerations, "an empty list is not null")
	c := pod.Spec.Containers[0]
	assert.Equal(t, "100m", c.Resources.Limits[lean.ResourceCPU].String())
	assert.Equal(t, "128974848", c.Resources.Limits[lean.ResourceMemory].String(), "a number is a quantity too")
	assert.Equal(t, "0.5", c.Resources.Requests[lean.ResourceCPU].String(), "as sent, trimmed")
	assert.Equal(t, lean.FromString("http"), c.LivenessProbe.HTTPGet.Port, "through the embedded ProbeHandler")
	assert.Equal(t, lean.FromInt32(8080), c.ReadinessProbe.TCPSocket.Port)
	assert.Equal(t, "busybox", pod.Spec.EphemeralContainers[0].Image, "through the embedded EphemeralContainerCommon")
}

func TestNodeSystemInfoDecodingIsStrict(t *testing.T) {
	var info lean.NodeSystemInfo
	require.NoError(t, info.UnmarshalJSON([]byte(`{"kernelVersion":"6.1.0","swap":{"capacity":1024}}`)))
	assert.Equal(t, "6.1.0", info.KernelVersion)
	assert.Equal(t, int64(1024), *info.Swap.Capacity)
	assert.EqualError(t, info.UnmarshalJSON([]byte(`{"kernel":"6.1.0"}`)), `unknown field "kernel"`)
}

// TestDecodingAllocatesLittle guards the point of the package: no
// reflection, a few allocations per value (strings, slices, maps), whatever
// the number of types.
func TestDecodingAllocatesLittle(t *testing.T) {
	data := []byte(`{"metadata":{"name":"web","labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx","resources":{"limits":{"cpu":"1"}}}]}}`)
	allocs := testing.AllocsPerRun(20, func() {
		var pod lean.Pod
		if err := pod.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 20.0, "allocations per decode")
}
