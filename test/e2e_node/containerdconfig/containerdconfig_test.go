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

package containerdconfig

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func settings() Settings {
	return Settings{
		Root:         "/run-root/containerd/root",
		State:        "/run-state/containerd/state",
		Socket:       "/run-state/containerd.sock",
		ShimPath:     "/build/containerd-shim-runc-v2",
		RuncPath:     "/build/runc",
		RuncRoot:     "/run-state/runc",
		CNIBinDir:    "/usr/lib/cni",
		CNIConfDir:   "/run-root/cni/net.d",
		CDISpecDir:   "/run-root/cdi",
		SandboxImage: "registry.k8s.io/pause:3.10.2",
		NRI: NRISettings{
			Socket:              "/run-state/nri.sock",
			PluginDir:           "/run-root/nri/plugins",
			PluginConfigDir:     "/run-root/nri/conf.d",
			RegistrationTimeout: 5 * time.Second,
			RequestTimeout:      2 * time.Second,
		},
	}
}

// The configuration names every path containerd would otherwise default
// to a host path, so a run shares nothing with the machine's containerd.
func TestRenderKeepsContainerdOffDefaultHostPaths(t *testing.T) {
	for _, version := range []int{Version2, Version3} {
		config, err := Render(version, settings())
		require.NoError(t, err)
		text := string(config)
		assert.True(t, strings.HasPrefix(text, "version = "+string(rune('0'+version))+"\n"), "version %d:\n%s", version, text)
		for _, want := range []string{
			`root = "/run-root/containerd/root"`,
			`state = "/run-state/containerd/state"`,
			`address = "/run-state/containerd.sock"`,
			`Root = "/run-state/runc"`,
			`conf_dir = "/run-root/cni/net.d"`,
			`registry.k8s.io/pause:3.10.2"`,
			`"io.containerd.internal.v1.opt"`,
		} {
			assert.Contains(t, text, want, "version %d", version)
		}
		for _, host := range []string{"/var/lib/containerd", "/run/containerd", "/etc/cni", "/opt/cni", "/etc/cdi", "/var/run/nri", "/opt/nri"} {
			assert.NotContains(t, text, host, "version %d", version)
		}
	}
}

func TestRenderVersion3NamesBinariesAndNRI(t *testing.T) {
	s := settings()
	s.NRI.DefaultValidator = true
	s.NRI.RequiredPlugins = []string{"a", "b"}
	s.NRI.TolerateMissingAnnotation = "tolerate"
	config, err := Render(Version3, s)
	require.NoError(t, err)
	text := string(config)
	for _, want := range []string{
		`runtime_path = "/build/containerd-shim-runc-v2"`,
		`BinaryName = "/build/runc"`,
		`cdi_spec_dirs = ["/run-root/cdi"]`,
		`bin_dirs = ["/usr/lib/cni"]`,
		`sandbox = "registry.k8s.io/pause:3.10.2"`,
		`socket_path = "/run-state/nri.sock"`,
		`plugin_request_timeout = "2s"`,
		`required_plugins = ["a", "b"]`,
		`tolerate_missing_plugins_annotation = "tolerate"`,
	} {
		assert.Contains(t, text, want)
	}

	config, err = Render(Version3, settings())
	require.NoError(t, err)
	assert.NotContains(t, string(config), "default_validator")
}

func TestRenderRefusesAMissingPathOrVersion(t *testing.T) {
	_, err := Render(1, settings())
	assert.ErrorContains(t, err, "version 1")

	s := settings()
	s.NRI.Socket = ""
	_, err = Render(Version3, s)
	assert.ErrorContains(t, err, "NRI.Socket must be an absolute path")
	// containerd 1.6 has no NRI of ours, nor a shim path.
	s.ShimPath = ""
	_, err = Render(Version2, s)
	assert.NoError(t, err)

	s = settings()
	s.Root = "relative/root"
	_, err = Render(Version2, s)
	assert.ErrorContains(t, err, `Root must be an absolute path, not "relative/root"`)

	s = settings()
	s.SandboxImage = ""
	_, err = Render(Version3, s)
	assert.ErrorContains(t, err, "SandboxImage")
}

// runtimeTable is the text of the TOML table header, up to the next table
// header, of a runtime handler's table (or its options').
func runtimeTable(t *testing.T, text, header string) string {
	t.Helper()
	i := strings.Index(text, header+"\n")
	require.GreaterOrEqual(t, i, 0, "no table %s in\n%s", header, text)
	body := text[i+len(header)+1:]
	if loc := tableHeader.FindStringIndex(body); loc != nil {
		body = body[:loc[0]]
	}
	return strings.TrimSpace(body)
}

var tableHeader = regexp.MustCompile(`(?m)^\s*\[`)

// An extra runtime handler (upstream's node e2e jobs define test-handler
// for the suite's RuntimeClass tests) runs runc as the default handler
// does, in both configuration versions.
func TestRenderDefinesExtraRuntimeHandlersAsRunc(t *testing.T) {
	for version, plugin := range map[int]string{
		Version2: `plugins."io.containerd.grpc.v1.cri"`,
		Version3: `plugins."io.containerd.cri.v1.runtime"`,
	} {
		s := settings()
		s.ExtraRuntimeHandlers = []string{"test-handler", "other-1"}
		config, err := Render(version, s)
		require.NoError(t, err)
		text := string(config)
		assert.Contains(t, text, `default_runtime_name = "runc"`, "version %d", version)
		want := map[string][]string{
			"":         {`runtime_type = "io.containerd.runc.v2"`},
			".options": {`SystemdCgroup = false`, `Root = "/run-state/runc"`},
		}
		if version == Version3 {
			want[""] = append(want[""], `runtime_path = "/build/containerd-shim-runc-v2"`)
			want[".options"] = append(want[".options"], `BinaryName = "/build/runc"`)
		}
		for _, h := range []string{"runc", "test-handler", "other-1"} {
			for suffix, lines := range want {
				header := "[" + plugin + ".containerd.runtimes." + h + suffix + "]"
				table := runtimeTable(t, text, header)
				for _, line := range lines {
					assert.Contains(t, table, line, "version %d, %s", version, header)
				}
				// The handler's table and the default's are the same.
				assert.Equal(t, runtimeTable(t, text, "["+plugin+".containerd.runtimes.runc"+suffix+"]"), table, "version %d, %s", version, header)
			}
		}
		assert.Equal(t, 3, strings.Count(text, `runtime_type = "io.containerd.runc.v2"`), "version %d:\n%s", version, text)

		// Without extra handlers runc is the only runtime.
		config, err = Render(version, settings())
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(string(config), "runtime_type = "), "version %d", version)
		assert.NotContains(t, string(config), "test-handler", "version %d", version)
	}
}

func TestRenderRefusesABadRuntimeHandler(t *testing.T) {
	for name, tc := range map[string]struct {
		handlers []string
		want     string
	}{
		"upper case":   {[]string{"Test-Handler"}, `runtime handler "Test-Handler" is not a DNS label`},
		"dot":          {[]string{"test.handler"}, `runtime handler "test.handler" is not a DNS label`},
		"empty":        {[]string{"test-handler", ""}, `runtime handler "" is not a DNS label`},
		"leading dash": {[]string{"-x"}, `runtime handler "-x" is not a DNS label`},
		"too long":     {[]string{strings.Repeat("a", 64)}, "is not a DNS label"},
		"toml quote":   {[]string{`a"]`}, "is not a DNS label"},
		"runc":         {[]string{"runc"}, `runtime handler "runc" is defined twice (runc is the default handler)`},
		"twice":        {[]string{"test-handler", "test-handler"}, `runtime handler "test-handler" is defined twice`},
	} {
		for _, version := range []int{Version2, Version3} {
			s := settings()
			s.ExtraRuntimeHandlers = tc.handlers
			_, err := Render(version, s)
			assert.ErrorContains(t, err, tc.want, "%s, version %d", name, version)
		}
	}
	s := settings()
	s.ExtraRuntimeHandlers = []string{strings.Repeat("a", 63)}
	_, err := Render(Version3, s)
	assert.NoError(t, err)
}

func TestCNI(t *testing.T) {
	n := Network{Name: "net", Bridge: "br0", Subnet: "10.1.2.0/24", IPAMDataDir: "/run-root/ipam"}
	isolated, err := CNI(n)
	require.NoError(t, err)
	var conf struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type      string `json:"type"`
			Bridge    string `json:"bridge"`
			IsGateway bool   `json:"isGateway"`
			IPMasq    bool   `json:"ipMasq"`
			Hairpin   bool   `json:"hairpinMode"`
			IPAM      struct {
				DataDir string              `json:"dataDir"`
				Routes  []map[string]string `json:"routes"`
				Ranges  [][]map[string]string
			} `json:"ipam"`
		} `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal(isolated, &conf))
	require.Len(t, conf.Plugins, 1)
	p := conf.Plugins[0]
	assert.Equal(t, "net", conf.Name)
	assert.Equal(t, "bridge", p.Type)
	assert.Equal(t, "br0", p.Bridge)
	assert.False(t, p.IsGateway)
	assert.False(t, p.IPMasq)
	assert.False(t, p.Hairpin)
	assert.Empty(t, p.IPAM.Routes)
	assert.Equal(t, "/run-root/ipam", p.IPAM.DataDir)
	assert.Equal(t, "10.1.2.0/24", p.IPAM.Ranges[0][0]["subnet"])

	n.Gateway, n.Hairpin = true, true
	gateway, err := CNI(n)
	require.NoError(t, err)
	conf.Plugins = nil
	require.NoError(t, json.Unmarshal(gateway, &conf))
	p = conf.Plugins[0]
	assert.True(t, p.IsGateway)
	assert.True(t, p.Hairpin)
	assert.False(t, p.IPMasq)
	assert.Equal(t, []map[string]string{{"dst": "0.0.0.0/0"}}, p.IPAM.Routes)
}

func TestCNIRefusesBadInput(t *testing.T) {
	good := Network{Name: "net", Bridge: "br0", Subnet: "10.1.2.0/24", IPAMDataDir: "/run-root/ipam"}
	for name, tc := range map[string]struct {
		change func(*Network)
		want   string
	}{
		"no bridge":     {func(n *Network) { n.Bridge = "" }, "Bridge must be set"},
		"bad subnet":    {func(n *Network) { n.Subnet = "10.1.2.0" }, "Subnet"},
		"relative ipam": {func(n *Network) { n.IPAMDataDir = "ipam" }, `IPAMDataDir must be an absolute path, not "ipam"`},
	} {
		n := good
		tc.change(&n)
		_, err := CNI(n)
		assert.ErrorContains(t, err, tc.want, name)
	}
}
