//go:build e2e_node

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

package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// PodSpec is the spec of every test pod: one container of the runtime's
// workload image, no service account token (so no projected volume and
// no extra API traffic), no probes (the tests never dial a pod), the
// node's DNS configuration (the cluster runs no DNS service; with
// ClusterFirst the kubelet would warn MissingClusterDNS on every pod), and
// a short grace period so that teardown is quick.
func (c *Cluster) PodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:            "workload",
			Image:           c.Runtime.WorkloadImage(),
			ImagePullPolicy: corev1.PullIfNotPresent,
		}},
		AutomountServiceAccountToken:  ptr.To(false),
		DNSPolicy:                     corev1.DNSDefault,
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		EnableServiceLinks:            ptr.To(false),
	}
}

// NewPod is a test pod with the given labels.
func (c *Cluster) NewPod(namespace, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec:       c.PodSpec(),
	}
}

// NewReplicaSet is a ReplicaSet of test pods carrying labels.
func (c *Cluster) NewReplicaSet(namespace, name string, replicas int32, labels map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       c.PodSpec(),
			},
		},
	}
}

// NewDaemonSet is a DaemonSet of test pods carrying labels.
func (c *Cluster) NewDaemonSet(namespace, name string, labels map[string]string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       c.PodSpec(),
			},
		},
	}
}

// CreateNamespace creates a namespace named after prefix (a test name) and
// waits for its default service account, which the ServiceAccount admission
// plugin wants before it admits a pod.
func (c *Cluster) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(prefix)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return "", fmt.Errorf("namespace %s: default service account: %w", ns.Name, err)
	}
	return ns.Name, nil
}

// namespacePrefix turns a test name such as TestDaemonSet/Soft into a
// valid generateName prefix: lower case, '-' for anything else, short
// enough for the random suffix.
func namespacePrefix(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	prefix := strings.Trim(b.String(), "-")
	if len(prefix) > 50 {
		prefix = prefix[:50]
	}
	return prefix + "-"
}

// namespaceDeletionTimeout bounds the wait for a namespace's pods to be
// gone: 110 pods on containerd took 1m25s on a 2-core machine with a build
// running next to it, and more than 2 minutes in the next round.
const namespaceDeletionTimeout = 5 * time.Minute

// DeleteNamespace deletes a namespace and waits until the kubelet has
// removed its pods, so the next test starts on an empty node.
func (c *Cluster) DeleteNamespace(ctx context.Context, namespace string) error {
	start := time.Now()
	err := c.Client.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, namespaceDeletionTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	klog.InfoS("Deleted namespace", "namespace", namespace, "took", time.Since(start).Round(time.Millisecond))
	return err
}
