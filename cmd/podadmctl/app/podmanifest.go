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
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	k8sapiv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"sigs.k8s.io/yaml"

	"github.com/podadmission/podadmission/pkg/util/yamldoc"
)

// maxManifestSize is the kubelet's limit on a static pod manifest.
const maxManifestSize = 10 << 20

// podScheme knows core/v1 Pods and the defaults the API server (and the
// kubelet, for static pods) applies to them.
var podScheme = runtime.NewScheme()

func init() {
	utilruntime.Must(v1.AddToScheme(podScheme))
	utilruntime.Must(k8sapiv1.RegisterDefaults(podScheme))
}

// strictPodDecoder fails on unknown and duplicate fields, like kubectl's
// server-side field validation, so that a misspelt field is not silently
// dropped from the pod the plugins judge.
var strictPodDecoder = serializer.NewCodecFactory(podScheme, serializer.EnableStrict).UniversalDeserializer()

// readPod reads one v1 Pod, YAML or JSON, from r; name names r in errors.
// The pod gets the API server's defaults.
func readPod(name string, r io.Reader) (*v1.Pod, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxManifestSize {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, maxManifestSize>>20)
	}
	doc, err := singleDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Strict: a key given twice is an error, not the last one winning.
	jsonData, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: not YAML or JSON: %w", name, err)
	}
	var typeMeta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(jsonData, &typeMeta); err != nil {
		return nil, fmt.Errorf("%s: not a Kubernetes object: %w", name, err)
	}
	if typeMeta.APIVersion != "v1" || typeMeta.Kind != "Pod" {
		return nil, fmt.Errorf("%s: apiVersion %q, kind %q: want apiVersion \"v1\", kind \"Pod\" (the kubelet admits pods, not the objects that create them)",
			name, typeMeta.APIVersion, typeMeta.Kind)
	}
	obj, _, err := strictPodDecoder.Decode(jsonData, nil, &v1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("%s: decoded a %T, not a Pod", name, obj)
	}
	podScheme.Default(pod)
	return pod, nil
}

// singleDocument returns the only YAML document in data; a stream of
// several is an error, since check evaluates one pod.
func singleDocument(data []byte) ([]byte, error) {
	docs, err := yamldoc.NonEmpty(data)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("empty, want a Pod manifest")
	case 1:
		return docs[0], nil
	}
	return nil, fmt.Errorf("holds %d YAML documents, want one Pod", len(docs))
}

// podAsNodeSees returns pod as the kubelet on nodeName holds it when it asks
// the plugins: bound to the node, with a namespace, a name and a uid, as the
// API server sets them; for a static pod, with the name, annotations and
// toleration the kubelet's file source gives it. name names the manifest in
// errors.
func podAsNodeSees(name string, pod *v1.Pod, nodeName string, static bool) (*v1.Pod, error) {
	pod = pod.DeepCopy()
	if pod.Name == "" && pod.GenerateName != "" && !static {
		pod.Name = pod.GenerateName + utilrand.String(5)
	}
	if pod.Name == "" {
		return nil, fmt.Errorf("%s: metadata.name: Required value", name)
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	if pod.UID == "" {
		pod.UID = uuid.NewUUID()
	}
	pod.Spec.NodeName = nodeName
	if !static {
		return pod, nil
	}
	// What pkg/kubelet/config does to a manifest from --pod-manifest-path.
	pod.Name = fmt.Sprintf("%s-%s", pod.Name, strings.ToLower(nodeName))
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[kubetypes.ConfigSourceAnnotationKey] = kubetypes.FileSource
	pod.Annotations[kubetypes.ConfigHashAnnotationKey] = string(pod.UID)
	if tolerateAll := (v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}); !slices.Contains(pod.Spec.Tolerations, tolerateAll) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, tolerateAll)
	}
	pod.Status.Phase = v1.PodPending
	return pod, nil
}
