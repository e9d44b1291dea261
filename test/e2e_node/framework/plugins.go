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
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
)

// PluginLabel on a test pod selects the one plugin that evaluates it, so
// that every test can configure its own plugins side by side in one kubelet
// without touching the pods of the others.
const PluginLabel = "e2e.podadmission.io/plugin"

// MatchPluginLabel is the match of a plugin that sees only pods labelled
// PluginLabel=name.
func MatchPluginLabel(name string) *configv1alpha1.PodMatch {
	return &configv1alpha1.PodMatch{
		PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{PluginLabel: name}},
	}
}

// PluginLabels are the labels of a pod that plugin name evaluates.
func PluginLabels(name string) map[string]string {
	return map[string]string{PluginLabel: name}
}

// InstallExecPlugin copies the test plugin's Exec build into the kubelet's
// plugin bin dir as name (the kubelet runs <bin dir>/<plugin name>),
// root-owned and 0755 as the trust checks demand.
func (c *Cluster) InstallExecPlugin(name string) error {
	binary, err := os.ReadFile(c.Binaries.TestExecPlugin)
	if err != nil {
		return fmt.Errorf("test plugin binary (make e2e-node-binaries builds it): %w", err)
	}
	return writeFileAtomically(filepath.Join(c.Kubelet.PluginBinDir, name), binary, 0o755)
}

// RemovePluginBinary deletes an Exec plugin's executable.
func (c *Cluster) RemovePluginBinary(name string) error {
	err := os.Remove(filepath.Join(c.Kubelet.PluginBinDir, name))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// WritePluginConfig writes a PodAdmissionConfiguration with plugins into
// the kubelet's config directory as file (atomically, 0644), and a copy into
// the artifacts.
func (c *Cluster) WritePluginConfig(file string, plugins ...configv1alpha1.PluginConfig) error {
	cfg := configv1alpha1.PodAdmissionConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: configv1alpha1.SchemeGroupVersion.String(), Kind: "PodAdmissionConfiguration"},
		Plugins:  plugins,
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := writeFileAtomically(filepath.Join(c.Kubelet.PluginConfigDir, file), data, 0o644); err != nil {
		return err
	}
	_ = os.MkdirAll(c.Layout.ArtifactPath("pod-admission"), 0o755)
	return os.WriteFile(c.Layout.ArtifactPath(filepath.Join("pod-admission", file)), data, 0o644)
}

// RemovePluginConfig deletes a configuration file written by
// WritePluginConfig.
func (c *Cluster) RemovePluginConfig(file string) error {
	err := os.Remove(filepath.Join(c.Kubelet.PluginConfigDir, file))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// PluginFile is a path for a plugin's decision or log file; plugins run
// as root from the kubelet and write there.
func (c *Cluster) PluginFile(name string) string {
	dir := c.Layout.StatePath("pod-admission", "files")
	_ = os.MkdirAll(dir, 0o755)
	return filepath.Join(dir, name)
}

// SetDecision writes a test plugin decision file: "allow" or
// "deny <Reason> <message>". Atomic, so a plugin call never reads half.
func SetDecision(path, decision string) error {
	return writeFileAtomically(path, []byte(decision+"\n"), 0o644)
}

// PluginCall is one line of a test plugin's --log-file.
type PluginCall struct {
	Namespace, Name, UID string
	Attempt              string
	Static               bool
	// Update: the call was an update of an admitted pod.
	Update bool
}

// ReadPluginLog parses a test plugin's --log-file; a missing file means no
// call was made.
func ReadPluginLog(path string) ([]PluginCall, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []PluginCall
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		// "<namespace>/<name> uid=<uid> attempt=<n> static=<bool>[ operation=Update]"
		fields := strings.Fields(scanner.Text())
		update := len(fields) == 5 && fields[4] == "operation=Update"
		if len(fields) != 4 && !update {
			return nil, fmt.Errorf("%s: unexpected line %q", path, scanner.Text())
		}
		ns, name, _ := strings.Cut(fields[0], "/")
		calls = append(calls, PluginCall{
			Namespace: ns,
			Name:      name,
			UID:       strings.TrimPrefix(fields[1], "uid="),
			Attempt:   strings.TrimPrefix(fields[2], "attempt="),
			Static:    fields[3] == "static=true",
			Update:    update,
		})
	}
	return calls, scanner.Err()
}

// CallsFor returns the calls made for the pod with uid.
func CallsFor(calls []PluginCall, uid string) []PluginCall {
	var out []PluginCall
	for _, c := range calls {
		if c.UID == uid {
			out = append(out, c)
		}
	}
	return out
}
