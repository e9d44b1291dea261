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
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// Options choose what Up brings up.
type Options struct {
	// Runtime is ContainerdMode, Containerd16Mode or FakeMode.
	Runtime string
	// ContainerdBinDir has containerd 2.x (ContainerdMode).
	ContainerdBinDir string
	// NRI, if set, configures containerd 2.x's NRI (the NRI comparison).
	NRI *NRIOptions
	// BinDir holds the binaries (see BinariesIn).
	BinDir string
	// PluginsDir holds the example plugins of cmd/: BinDir for a build,
	// the node's plugin directory for an installed package.
	PluginsDir string
	// KubeletBinary, if set, is the kubelet to run instead of BinDir's.
	KubeletBinary string
	// ArtifactsRoot is where the run's artifacts directory is created.
	ArtifactsRoot string
	// NodeName is the kubelet's node.
	NodeName string
	// Kubelet is how the kubelet is started first.
	Kubelet KubeletOptions
	// LockWait is how long to wait for another run on the machine to end.
	LockWait time.Duration
}

// Cluster is a running one-node cluster.
type Cluster struct {
	Layout       Layout
	Options      Options
	Binaries     Binaries
	ControlPlane *ControlPlane
	Runtime      Runtime
	// CRIEndpoint is the recorder the kubelet talks to.
	CRIEndpoint string
	Kubelet     *Kubelet
	Client      kubernetes.Interface
	// StartupTime is how long Up took, from the lock to a Ready node.
	StartupTime time.Duration

	lock      *machineLock
	snapshot  *hostSnapshot
	processes []*Process
	// expendable are processes a test expects to end (the NRI plugin,
	// which NRI closes when it times out): stopped at teardown, but not
	// part of Healthy.
	expendable []*Process
	downOnce   sync.Once
}

// Up brings the cluster up. On error, or when ctx ends (use
// UpUntilInterrupted to end it on Ctrl-C), everything started is torn down
// again and the error says which component failed and where its log is.
func Up(ctx context.Context, opts Options) (*Cluster, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the node e2e cluster runs a kubelet and a container runtime: run it as root")
	}
	bins := BinariesIn(opts.BinDir)
	if opts.KubeletBinary != "" {
		bins.Kubelet = opts.KubeletBinary
	}
	bins.ContainerdDir = opts.ContainerdBinDir
	if err := bins.check(bins.Kubelet, bins.APIServer, bins.ControllerManager, bins.Scheduler, bins.Etcd, bins.CRIRecorder, bins.FakeRuntime, bins.PauseImage, bins.WorkloadImage); err != nil {
		return nil, err
	}
	lock, err := acquireMachineLock(ctx, opts.LockWait)
	if err != nil {
		return nil, err
	}
	// Start-up is timed from here: waiting for another run is not part of it.
	start := time.Now()
	c := &Cluster{Options: opts, Binaries: bins, lock: lock}
	if err := c.up(ctx); err != nil {
		c.Down()
		return nil, err
	}
	c.StartupTime = time.Since(start)
	klog.InfoS("Cluster is up", "run", c.Layout.RunID, "runtime", opts.Runtime, "took", c.StartupTime.Round(time.Millisecond), "artifacts", c.Layout.Artifacts)
	return c, nil
}

func (c *Cluster) up(ctx context.Context) error {
	// A run that died leaves its state directory behind: clean it first.
	if _, err := os.Stat(StateRoot); err == nil {
		klog.InfoS("Cleaning up after an earlier run that did not finish", "state", StateRoot)
		if err := cleanupStale(); err != nil {
			return fmt.Errorf("cleaning up an earlier run: %w", err)
		}
	}
	layout, err := newLayout(c.Options.ArtifactsRoot, c.Options.Runtime)
	if err != nil {
		return err
	}
	c.Layout = layout
	if c.snapshot, err = takeHostSnapshot(); err != nil {
		return err
	}

	phase := time.Now()
	c.ControlPlane, err = startControlPlane(ctx, layout, c.Binaries, c.Options.NodeName)
	if c.ControlPlane != nil {
		c.processes = append(c.processes, c.ControlPlane.Processes()...)
	}
	if err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	klog.InfoS("Control plane is up", "took", time.Since(phase).Round(time.Millisecond))
	if c.Client, err = kubernetes.NewForConfig(c.ControlPlane.RESTConfig); err != nil {
		return err
	}

	phase = time.Now()
	if c.Runtime, err = newRuntime(c.Options.Runtime, layout, c.Binaries, c.Options.NRI); err != nil {
		return err
	}
	endpoint, processes, err := c.Runtime.start(ctx)
	c.processes = append(c.processes, processes...)
	if err != nil {
		return fmt.Errorf("%s runtime: %w", c.Options.Runtime, err)
	}
	c.CRIEndpoint = endpoint
	klog.InfoS("Container runtime is up", "mode", c.Options.Runtime, "took", time.Since(phase).Round(time.Millisecond))

	phase = time.Now()
	if err := createKubeletCgroupRoot(); err != nil {
		return err
	}
	c.Kubelet, err = newKubelet(layout, c.Binaries.Kubelet, c.Options.NodeName, c.ControlPlane.KubeletKubeconfig, c.ControlPlane.PKI.CA.CertPath, endpoint, c.Runtime)
	if err != nil {
		return err
	}
	if err := c.StartKubelet(ctx, c.Options.Kubelet); err != nil {
		return err
	}
	klog.InfoS("Kubelet is up and the node is Ready", "took", time.Since(phase).Round(time.Millisecond))
	return nil
}

// UpUntilInterrupted is Up, with a Ctrl-C, SIGTERM or SIGHUP during start-up
// ending it (and tearing down what was started), and with the same signals
// tearing the cluster down once it is up (see TearDownOnInterrupt).
func UpUntilInterrupted(ctx context.Context, opts Options) (*Cluster, error) {
	upCtx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	c, err := Up(upCtx, opts)
	stop()
	if err != nil {
		return nil, err
	}
	TearDownOnInterrupt(c.Down)
	return c, nil
}

// StartKubelet starts the kubelet with opts and waits until the node is
// Ready.
func (c *Cluster) StartKubelet(ctx context.Context, opts KubeletOptions) error {
	start := time.Now()
	if err := c.Kubelet.start(ctx, opts); err != nil {
		return fmt.Errorf("kubelet: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return c.Kubelet.process.WaitReady(ctx, c.nodeReadySince(start))
}

// StopKubelet stops the kubelet; pods keep running in the runtime.
func (c *Cluster) StopKubelet() {
	c.Kubelet.stop()
}

// RestartKubelet stops the kubelet and starts it again with opts.
func (c *Cluster) RestartKubelet(ctx context.Context, opts KubeletOptions) error {
	start := time.Now()
	c.StopKubelet()
	if err := c.StartKubelet(ctx, opts); err != nil {
		return err
	}
	klog.InfoS("Kubelet restarted", "options", opts, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// EnsureKubelet restarts the kubelet with opts unless it already runs with
// them, and says whether it did.
func (c *Cluster) EnsureKubelet(ctx context.Context, opts KubeletOptions) (bool, error) {
	if c.Kubelet.process != nil && c.Kubelet.process.Running() && c.Kubelet.options.Equal(opts) {
		return false, nil
	}
	return true, c.RestartKubelet(ctx, opts)
}

// CRIJournal is the recorder's journal of pod lifecycle calls.
func (c *Cluster) CRIJournal() string { return c.Layout.ArtifactPath("cri-journal.jsonl") }

// Healthy returns an error naming every component that has exited.
func (c *Cluster) Healthy() error {
	var errs []error
	for _, p := range c.processes {
		if !p.Running() {
			errs = append(errs, p.ExitError())
		}
	}
	if c.Kubelet != nil && c.Kubelet.process != nil && !c.Kubelet.process.Running() {
		errs = append(errs, c.Kubelet.process.ExitError())
	}
	return errors.Join(errs...)
}

// Down dumps the cluster's state into the artifacts, stops everything and
// cleans the machine. It is safe to call more than once and after a failed
// Up.
func (c *Cluster) Down() {
	c.downOnce.Do(func() {
		start := time.Now()
		ctx := context.Background()
		if c.Client != nil {
			c.dumpState(ctx)
		}
		if c.Kubelet != nil {
			c.Kubelet.stop()
		}
		if c.Runtime != nil {
			c.Runtime.stop(ctx)
		}
		if c.ControlPlane != nil {
			c.ControlPlane.stop()
		}
		for _, p := range append(c.processes, c.expendable...) {
			p.Stop(5 * time.Second)
		}
		if err := cleanupHost(c.snapshot); err != nil {
			klog.ErrorS(err, "Host cleanup left something behind")
		}
		if c.lock != nil {
			c.lock.release()
		}
		klog.InfoS("Cluster is down", "took", time.Since(start).Round(time.Millisecond), "artifacts", c.Layout.Artifacts)
	})
}

// CleanupStale cleans up after a run that died without its teardown (for
// example one killed with SIGKILL), from the host snapshot it left in the
// state directory. While another run is alive it does nothing: that run
// owns the state directory, and cleaned up after earlier runs when it
// started.
func CleanupStale() error {
	lock, holder, err := tryMachineLock()
	if errors.Is(err, unix.EWOULDBLOCK) {
		klog.InfoS("Another node e2e run is active; leaving the machine to it", "holder", holder)
		return nil
	}
	if err != nil {
		return err
	}
	defer lock.release()
	return cleanupStale()
}

func cleanupStale() error {
	_, stateErr := os.Stat(StateRoot)
	_, socketErr := os.Stat(SocketRoot)
	if stateErr != nil && socketErr != nil {
		if left := leftovers(); len(left) > 0 {
			return fmt.Errorf("no earlier run's state, but left behind: %s", strings.Join(left, "; "))
		}
		klog.InfoS("Nothing left by an earlier run")
		return nil
	}
	snapshot, err := loadHostSnapshot()
	if err != nil {
		klog.InfoS("No host snapshot from the earlier run; keeping every fixed host path", "err", err)
		snapshot = nil
	}
	return cleanupHost(snapshot)
}
