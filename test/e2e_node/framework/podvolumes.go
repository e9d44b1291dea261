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
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The volumes of a pod made by NewPodWithVolumes: one of each kind a real
// pod has, and the projected service account token (kube-api-access-*)
// that the API server's ServiceAccount admission adds to every pod that
// does not opt out.
const (
	VolumeScratch       = "scratch"
	VolumeMemoryScratch = "scratch-memory"
	VolumeHost          = "host"
	VolumeSecret        = "secret"
	VolumeConfig        = "config"

	// VolumeSecretName and VolumeConfigName are the objects the secret and
	// configMap volumes mount (CreateVolumeSources), each with one key.
	VolumeSecretName = "e2e-secret"
	VolumeConfigName = "e2e-config"
	volumeKey        = "data"
	volumeValue      = "e2e"
	// apiAccessVolumePrefix is the ServiceAccount admission plugin's name
	// for the projected token volume.
	apiAccessVolumePrefix = "kube-api-access-"
)

// NewPodWithVolumes is a test pod with the volumes of a real pod: an
// emptyDir on disk and one in memory (a tmpfs mount), a hostPath directory
// the kubelet creates (DirectoryOrCreate, under HostPathDir), a secret and
// a configMap (CreateVolumeSources makes them in namespace), and the
// service account token: unlike PodSpec it does not turn the token off, so
// the ServiceAccount admission plugin adds kube-api-access-*.
func (c *Cluster) NewPodWithVolumes(namespace, name string, labels map[string]string) *corev1.Pod {
	pod := c.NewPod(namespace, name, labels)
	pod.Spec.AutomountServiceAccountToken = nil
	pod.Spec.Volumes = []corev1.Volume{
		{Name: VolumeScratch, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: VolumeMemoryScratch, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		{Name: VolumeHost, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: c.HostPathDir(namespace, name),
			Type: ptr.To(corev1.HostPathDirectoryOrCreate),
		}}},
		{Name: VolumeSecret, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: VolumeSecretName}}},
		{Name: VolumeConfig, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: VolumeConfigName},
		}}},
	}
	for _, v := range pod.Spec.Volumes {
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: v.Name, MountPath: "/mnt/" + v.Name})
	}
	return pod
}

// PodMaker makes a test pod: Cluster.NewPod or Cluster.NewPodWithVolumes.
type PodMaker func(namespace, name string, labels map[string]string) *corev1.Pod

// HostPathDir is the hostPath directory of a pod of NewPodWithVolumes; the
// kubelet creates it when it sets the volume up. It is in the state
// directory, which teardown removes.
func (c *Cluster) HostPathDir(namespace, name string) string {
	return c.Layout.StatePath("host-paths", namespace, name)
}

// CreateVolumeSources creates the secret and the configMap the pods of
// NewPodWithVolumes mount, in namespace.
func (c *Cluster) CreateVolumeSources(ctx context.Context, namespace string) error {
	data := map[string]string{volumeKey: volumeValue}
	_, err := c.Client.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: VolumeSecretName},
		StringData: data,
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("secret %s/%s: %w", namespace, VolumeSecretName, err)
	}
	_, err = c.Client.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: VolumeConfigName},
		Data:       data,
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("configMap %s/%s: %w", namespace, VolumeConfigName, err)
	}
	return nil
}

// APIAccessVolume is the name of the projected token volume the
// ServiceAccount admission plugin added to pod, or "" if it added none.
func APIAccessVolume(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, apiAccessVolumePrefix) && v.Projected != nil {
			return v.Name
		}
	}
	return ""
}

// PodVolumesDir is <kubelet root-dir>/pods/<uid>/volumes, where the
// kubelet sets up the pod's volumes (one <plugin>/<volume> directory each).
func (c *Cluster) PodVolumesDir(uid types.UID) string {
	return filepath.Join(c.Kubelet.RootDir, "pods", string(uid), "volumes")
}

// PodVolumeDirs lists what is under PodVolumesDir, as
// "<plugin>/<volume>" (kubernetes.io~secret/secret); none if the
// directory does not exist.
func (c *Cluster) PodVolumeDirs(uid types.UID) ([]string, error) {
	root := c.PodVolumesDir(uid)
	plugins, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var dirs []string
	for _, p := range plugins {
		volumes, err := os.ReadDir(filepath.Join(root, p.Name()))
		if err != nil {
			return nil, err
		}
		if len(volumes) == 0 {
			dirs = append(dirs, p.Name()+"/")
		}
		for _, v := range volumes {
			dirs = append(dirs, p.Name()+"/"+v.Name())
		}
	}
	return dirs, nil
}

// PodMounts returns the mount points, from this process's mountinfo (the
// kubelet's mount namespace), under the kubelet's directory of the pod
// with uid.
func (c *Cluster) PodMounts(uid types.UID) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	podDir := filepath.Join(c.Kubelet.RootDir, "pods", string(uid)) + "/"
	var mounts []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": field 5 is the mount point.
		fields := strings.Fields(scanner.Text())
		if len(fields) >= 5 && strings.HasPrefix(fields[4]+"/", podDir) {
			mounts = append(mounts, fields[4])
		}
	}
	return mounts, scanner.Err()
}

// CheckVolumesSetUp returns an error for every volume of a pod of
// NewPodWithVolumes that the kubelet has not set up: the directories
// under PodVolumesDir, the secret's and configMap's key with its value,
// the token of kube-api-access-*, the memory emptyDir's tmpfs mount and
// the hostPath directory.
func (c *Cluster) CheckVolumesSetUp(pod *corev1.Pod) error {
	root := c.PodVolumesDir(pod.UID)
	var errs []error
	for _, dir := range []string{"kubernetes.io~empty-dir/" + VolumeScratch, "kubernetes.io~empty-dir/" + VolumeMemoryScratch} {
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			errs = append(errs, fmt.Errorf("emptyDir %s: %v", dir, err))
		}
	}
	for _, file := range []string{"kubernetes.io~secret/" + VolumeSecret + "/" + volumeKey, "kubernetes.io~configmap/" + VolumeConfig + "/" + volumeKey} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil || string(data) != volumeValue {
			errs = append(errs, fmt.Errorf("%s: want %q, got %q (%v)", file, volumeValue, data, err))
		}
	}
	if token := APIAccessVolume(pod); token == "" {
		errs = append(errs, fmt.Errorf("pod %s has no %s* volume: the ServiceAccount admission plugin did not add it", pod.Name, apiAccessVolumePrefix))
	} else if data, err := os.ReadFile(filepath.Join(root, "kubernetes.io~projected", token, "token")); err != nil || len(data) == 0 {
		errs = append(errs, fmt.Errorf("projected %s: no token (%v)", token, err))
	}
	mounts, err := c.PodMounts(pod.UID)
	if err != nil {
		return err
	}
	memory := filepath.Join(root, "kubernetes.io~empty-dir", VolumeMemoryScratch)
	if !slices.Contains(mounts, memory) {
		errs = append(errs, fmt.Errorf("no mount at %s; the pod's mounts: %v", memory, mounts))
	}
	if _, err := os.Stat(c.HostPathDir(pod.Namespace, pod.Name)); err != nil {
		errs = append(errs, fmt.Errorf("hostPath: %w", err))
	}
	return errors.Join(errs...)
}
