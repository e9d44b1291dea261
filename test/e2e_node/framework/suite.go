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
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

// Suite flags; the Makefile sets them, the environment gives defaults.
var (
	runtimeFlag   = flag.String("e2e.runtime", envOr("E2E_RUNTIME", ContainerdMode), "container runtime mode: containerd (2.x, make containerd), containerd1.6 (Debian's) or fake")
	containerdDir = flag.String("e2e.containerd-bin-dir", envOr("E2E_CONTAINERD_BIN_DIR", ""), "directory with containerd 2.x, its shim, ctr and runc (build/containerd.sh dir)")
	binDirFlag    = flag.String("e2e.bin-dir", envOr("E2E_BIN_DIR", "_output/bin"), "directory with the kubelet, control plane and harness binaries")
	kubeletFlag   = flag.String("e2e.kubelet", "", "kubelet binary to run (default <bin-dir>/kubelet), e.g. another minor's against this control plane")
	artifactsFlag = flag.String("e2e.artifacts", envOr("E2E_ARTIFACTS", "_output/e2e"), "directory to create the run's artifacts directory in")
	nodeNameFlag  = flag.String("e2e.node-name", "podadmission-e2e-node", "name of the kubelet's node")
	lockWaitFlag  = flag.Duration("e2e.lock-wait", 30*time.Minute, "how long to wait for another node e2e run on this machine to end")
)

// pluginsDirFlag is where the example plugins of cmd/ are: the build's bin
// dir, or the directory a package installed them in.
var pluginsDirFlag = flag.String("e2e.plugins-dir", envOr("E2E_PLUGINS_DIR", ""), "directory with the example plugin binaries of cmd/ (default: the -e2e.bin-dir)")

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// OptionsFromFlags are the cluster options the -e2e.* flags select, with
// the kubelet started with kubelet.
func OptionsFromFlags(kubelet KubeletOptions) (Options, error) {
	binDir, err := filepath.Abs(*binDirFlag)
	if err != nil {
		return Options{}, err
	}
	pluginsDir := binDir
	if *pluginsDirFlag != "" {
		if pluginsDir, err = filepath.Abs(*pluginsDirFlag); err != nil {
			return Options{}, err
		}
	}
	containerdBinDir := ""
	if *containerdDir != "" {
		if containerdBinDir, err = filepath.Abs(*containerdDir); err != nil {
			return Options{}, err
		}
	}
	kubeletBinary := ""
	if *kubeletFlag != "" {
		if kubeletBinary, err = filepath.Abs(*kubeletFlag); err != nil {
			return Options{}, err
		}
	}
	return Options{
		Runtime:          *runtimeFlag,
		ContainerdBinDir: containerdBinDir,
		BinDir:           binDir,
		PluginsDir:       pluginsDir,
		KubeletBinary:    kubeletBinary,
		ArtifactsRoot:    *artifactsFlag,
		NodeName:         *nodeNameFlag,
		Kubelet:          kubelet,
		LockWait:         *lockWaitFlag,
	}, nil
}

// Suite is a test package's shared cluster and figures.
type Suite struct {
	Cluster *Cluster
	Figures Figures
}

// RunSuite is a TestMain: it brings the cluster up (kubelet started with
// kubelet options, the flags' options changed by each adjust), runs the
// tests, prints and saves the measured figures and tears the cluster down,
// also on Ctrl-C. It returns the exit code.
func RunSuite(m *testing.M, kubelet KubeletOptions, suite *Suite, adjust ...func(*Options)) int {
	klog.InitFlags(nil)
	flag.Parse()
	// The tests that watch a controller for a whole window run in
	// parallel; the default (GOMAXPROCS, 2 here) would run them in turn.
	if !flagSet("test.parallel") {
		_ = flag.Set("test.parallel", "32")
	}
	// Listing the tests needs no cluster.
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return m.Run()
	}
	opts, err := OptionsFromFlags(kubelet)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, f := range adjust {
		f(&opts)
	}
	cluster, err := UpUntilInterrupted(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: bringing the node e2e cluster up: %v\n", err)
		return 1
	}
	suite.Cluster = cluster
	suite.Figures.AddDuration("cluster", "startup ("+cluster.Options.Runtime+")", cluster.StartupTime)

	start := time.Now()
	code := m.Run()
	suite.Figures.AddDuration("cluster", "tests", time.Since(start))
	if err := cluster.Healthy(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: a cluster component died during the tests: %v\n", err)
		code = 1
	}

	cluster.Down()
	suite.Figures.Print(os.Stdout)
	if err := suite.Figures.Save(cluster.Layout.ArtifactPath("figures.json")); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	fmt.Printf("artifacts: %s\n", cluster.Layout.Artifacts)
	return code
}

// Figure records a measured figure of t and logs it.
func (s *Suite) Figure(t testing.TB, name string, value float64, unit string) {
	t.Helper()
	t.Logf("figure: %s = %.3f %s", name, value, unit)
	s.Figures.Add(t.Name(), name, value, unit)
}

// Duration records a duration figure of t in seconds.
func (s *Suite) Duration(t testing.TB, name string, d time.Duration) {
	t.Helper()
	s.Figure(t, name, d.Seconds(), "s")
}

// Namespace creates a namespace for t and deletes it, waiting for its pods
// to go, when t ends.
func (s *Suite) Namespace(t testing.TB, ctx context.Context) string {
	t.Helper()
	ns, err := s.Cluster.CreateNamespace(ctx, t.Name())
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := s.Cluster.DeleteNamespace(ctx, ns); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	return ns
}
