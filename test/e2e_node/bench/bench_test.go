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

package bench

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
	"github.com/podadmission/podadmission/test/e2e_node/framework"
)

var (
	thrashWindow = flag.Duration("e2e.thrash-window", 120*time.Second, "window in which controller pod creations are counted")
	holdWindow   = flag.Duration("e2e.hold-window", 5*time.Minute, "how long 100 held pods and 100 running pods are measured")
	burstPods    = flag.Int("e2e.burst-pods", 110, "pods in the burst benchmark (the kubelet's default maxPods)")
	burstRounds  = flag.Int("e2e.burst-rounds", 3, "bursts with and without the plugin, alternating")
	gatePods     = flag.Int("e2e.gate-pods", 50, "held pods let go by one push in the gate-open benchmark")
	gateSamples  = flag.Int("e2e.gate-samples", 40, "pods the gate-open benchmark holds and lets go one at a time")
	gateRounds   = flag.Int("e2e.gate-rounds", 5, "rounds of the gate-open benchmark's release of many pods and its reference, alternating which goes first")
	costPods     = flag.Int("e2e.cost-pods", 100, "pods held, then run, in the cost benchmark")
	costProfile  = flag.Bool("e2e.cost-profile", false, "record the kubelet's CPU profile of each window of the cost benchmark into the run's artifacts (cost-<window>.pprof)")
)

// TestBenchControllerThrash counts the pods a 1-replica ReplicaSet and a
// DaemonSet create in the window when a plugin rejects their pods, soft and
// hard, all four side by side in one window.
func TestBenchControllerThrash(t *testing.T) {
	useKubelet(t, pluginKubelet)
	c := suite.Cluster
	ctx, cancel := context.WithTimeout(context.Background(), *thrashWindow+5*time.Minute)
	defer cancel()

	type run struct {
		name    string
		plugin  string
		create  func(ns string) error
		counter *framework.PodCounter
	}
	labels := framework.PluginLabels
	runs := []*run{
		{name: "ReplicaSet soft", plugin: pluginSoft},
		{name: "ReplicaSet hard", plugin: pluginHard},
		{name: "DaemonSet soft", plugin: pluginSoft},
		{name: "DaemonSet hard", plugin: pluginHard},
	}
	for i, r := range runs {
		ns := suite.Namespace(t, ctx)
		var err error
		r.counter, err = framework.CountPods(ctx, c.Client, ns)
		require.NoError(t, err)
		if i < 2 {
			_, err = c.Client.AppsV1().ReplicaSets(ns).Create(ctx, c.NewReplicaSet(ns, "thrash", 1, labels(r.plugin)), metav1.CreateOptions{})
		} else {
			_, err = c.Client.AppsV1().DaemonSets(ns).Create(ctx, c.NewDaemonSet(ns, "thrash", labels(r.plugin)), metav1.CreateOptions{})
		}
		require.NoError(t, err)
	}
	time.Sleep(*thrashWindow)
	for _, r := range runs {
		r.counter.Stop()
		require.NoError(t, r.counter.Err())
		suite.Figure(t, fmt.Sprintf("%s: pods created in %s", r.name, *thrashWindow), float64(r.counter.Created()), "pods")
	}
	assert.Equal(t, 1, runs[0].counter.Created(), "soft ReplicaSet")
	assert.Equal(t, 1, runs[2].counter.Created(), "soft DaemonSet")
}

// TestBenchGateOpen measures the time from a GRPC plugin's push (its
// decision file flips to allow) to Running: one pod at a time (the
// latency of a push, framework.Cluster.MeasurePushes), then many held pods
// let go by one push (throughput), each next to the same pods created with
// no plugin. Both are measured for pods with no volume and for pods with
// the volumes of a real pod (framework.Cluster.NewPodWithVolumes: the
// kubelet waits for those with a 300 ms poll, also with no plugin).
func TestBenchGateOpen(t *testing.T) {
	useKubelet(t, pluginKubelet)
	c := suite.Cluster
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	kinds := []struct {
		what   string
		newPod framework.PodMaker
	}{
		{"one pod", c.NewPod},
		{"one pod with volumes", c.NewPodWithVolumes},
	}
	for _, kind := range kinds {
		ns := podNamespace(t, ctx)
		counter, err := framework.CountPods(ctx, c.Client, ns)
		require.NoError(t, err)
		samples, alone, err := c.MeasurePushes(ctx, counter, grpcGate(c), kind.newPod, ns, *gateSamples, 10*time.Second)
		counter.Stop()
		require.NoError(t, err)
		suite.PushFigures(t, kind.what, samples, alone)
		// Delete now (not at cleanup): the next pods start on an empty node.
		require.NoError(t, c.DeleteNamespace(ctx, ns))
	}

	// Rounds alternate which of the two goes first, so that drift on a
	// shared machine, or what the previous group's teardown leaves the
	// runtime to do, hits both alike. Two comparisons: the medians of
	// their p99s, and the median of each round's own ratio (its push and
	// its reference ran back to back, so the drift between rounds, which
	// was larger than the 5 % the goal allows, cancels out of each pair).
	kinds[0].what, kinds[1].what = "all at once", "all at once with volumes"
	for _, kind := range kinds {
		var pushed, reference rounds
		for round := range *gateRounds {
			if round%2 == 0 {
				pushed.add(t, kind.what+", push", onePushForMany(t, ctx, kind.newPod))
				reference.add(t, kind.what+", reference", createdAtOnce(t, ctx, kind.newPod))
			} else {
				reference.add(t, kind.what+", reference", createdAtOnce(t, ctx, kind.newPod))
				pushed.add(t, kind.what+", push", onePushForMany(t, ctx, kind.newPod))
			}
		}
		suite.Figure(t, kind.what+": held pods", float64(*gatePods), "pods")
		suite.Duration(t, fmt.Sprintf("%s: push to Running p50 (median of %d)", kind.what, *gateRounds), pushed.median(50))
		suite.Duration(t, fmt.Sprintf("%s: push to Running p99 (median of %d)", kind.what, *gateRounds), pushed.median(99))
		suite.Duration(t, fmt.Sprintf("%s, reference: create to Running p99, no plugin (median of %d)", kind.what, *gateRounds), reference.median(99))
		suite.Figure(t, kind.what+": median p99s, push/reference ratio", pushed.median(99).Seconds()/reference.median(99).Seconds(), "x")
		ratios := pairedRatios(pushed, reference, 99)
		suite.Figure(t, fmt.Sprintf("%s: push/reference p99 ratio (median of %d rounds' pairs)", kind.what, len(ratios)), medianOf(ratios), "x")
		suite.Figure(t, kind.what+": the rounds' pairs, lowest ratio", slices.Min(ratios), "x")
		suite.Figure(t, kind.what+": the rounds' pairs, highest ratio", slices.Max(ratios), "x")
	}
}

// pairedRatios is each round's percentile p of the pushed group over its
// reference's, round by round.
func pairedRatios(pushed, reference rounds, p float64) []float64 {
	var ratios []float64
	for i := range pushed {
		ratios = append(ratios, framework.Percentile(pushed[i].running, p).Seconds()/framework.Percentile(reference[i].running, p).Seconds())
	}
	return ratios
}

// medianOf is the median of values (the mean of the middle two for an
// even count).
func medianOf(values []float64) float64 {
	sorted := slices.Sorted(slices.Values(values))
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// rounds are the start-ups of one group of pods in several rounds.
type rounds []*startup

// add keeps s and logs where its start-up went.
func (r *rounds) add(t *testing.T, what string, s *startup) {
	t.Helper()
	s.report(t, fmt.Sprintf("%s, round %d", what, len(*r)+1))
	*r = append(*r, s)
}

// median is the median over the rounds of each round's percentile p of
// the time to Running.
func (r rounds) median(p float64) time.Duration {
	var each []time.Duration
	for _, s := range r {
		each = append(each, framework.Percentile(s.running, p))
	}
	return framework.Percentile(each, 50)
}

// startup is when each pod of a group reached each stage of its start,
// counted from the group's start (the push, or the creations).
type startup struct {
	start time.Time
	// sandbox is when the kubelet asked for the pod's sandbox
	// (RunPodSandbox), started when its last container was started
	// (StartContainer returned), running when its status said Running.
	sandbox, started, running []time.Duration
}

// startupOf reads the stages of uids's start from the CRI journal and
// counter.
func startupOf(t *testing.T, start time.Time, uids []types.UID, counter *framework.PodCounter) *startup {
	t.Helper()
	calls, err := crirecord.ReadJournal(suite.Cluster.CRIJournal())
	require.NoError(t, err)
	s := &startup{start: start}
	for _, uid := range uids {
		at, _ := counter.RunningAt(uid)
		s.running = append(s.running, at.Sub(start))
		if sandboxes := crirecord.Filter(calls, "RunPodSandbox", string(uid)); len(sandboxes) > 0 {
			s.sandbox = append(s.sandbox, sandboxes[0].Started.Sub(start))
		}
		var last time.Time
		for _, c := range crirecord.Filter(calls, "StartContainer", string(uid)) {
			if c.Time.After(last) {
				last = c.Time
			}
		}
		if !last.IsZero() {
			s.started = append(s.started, last.Sub(start))
		}
	}
	return s
}

// report logs where the pods' start-up went, stage by stage (p50 / p99):
// the figures that tell a slow release from a slow runtime. They are not
// rows of BENCHMARKS.md.
func (s *startup) report(t *testing.T, what string) {
	t.Helper()
	for _, stage := range []struct {
		name string
		d    []time.Duration
	}{
		{"sandbox asked", s.sandbox},
		{"containers started", s.started},
		{"Running", s.running},
	} {
		t.Logf("%s: %s p50 %s, p99 %s (%d pods)", what, stage.name,
			framework.Percentile(stage.d, 50).Round(time.Millisecond), framework.Percentile(stage.d, 99).Round(time.Millisecond), len(stage.d))
	}
}

// onePushForMany holds gatePods pods of newPod with the GRPC gate, lets
// them go with one push and returns each one's start-up from the push.
// The pods are deleted before it returns.
func onePushForMany(t *testing.T, ctx context.Context, newPod framework.PodMaker) *startup {
	t.Helper()
	c := suite.Cluster
	gate := grpcGate(c)
	require.NoError(t, gate.Close())
	ns := podNamespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()
	uids := createPods(t, ctx, ns, *gatePods, pluginGRPC, newPod)
	require.Eventually(t, func() bool {
		return countPods(counter, func(p *corev1.Pod) bool { return p.Status.Reason == reasonGRPCClosed }) == len(uids)
	}, 5*time.Minute, 100*time.Millisecond, "every pod should be held")
	settleStatusWrites(t, ctx)

	opened, err := gate.Open()
	require.NoError(t, err)
	require.Eventually(t, func() bool { return countPods(counter, framework.PodRunning) == len(uids) }, 5*time.Minute, 50*time.Millisecond)
	s := startupOf(t, opened, uids, counter)
	require.NoError(t, c.DeleteNamespace(ctx, ns))
	return s
}

// createdAtOnce is the reference for onePushForMany: gatePods pods of
// newPod that no plugin looks at, created at once; each one's start-up
// from just before the creations. The pods are deleted before it returns.
func createdAtOnce(t *testing.T, ctx context.Context, newPod framework.PodMaker) *startup {
	t.Helper()
	c := suite.Cluster
	ns := podNamespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()
	settleStatusWrites(t, ctx)
	start := time.Now()
	uids := createPods(t, ctx, ns, *gatePods, "none", newPod)
	require.Eventually(t, func() bool { return countPods(counter, framework.PodRunning) == len(uids) }, 5*time.Minute, 50*time.Millisecond)
	s := startupOf(t, start, uids, counter)
	require.NoError(t, c.DeleteNamespace(ctx, ns))
	return s
}

// statusWritesSettle is how long the kubelet's pod status writes must have
// stopped before a measurement starts: the time its API client's rate
// limiter (kubeAPIQPS 50, kubeAPIBurst 100, the defaults) takes to refill.
// Without it, 50 pods let go just after their holds were written start
// with the limiter drained by those writes, and the pods created for the
// reference with a full one.
const statusWritesSettle = 2 * time.Second

// settleStatusWrites waits until the API server has counted no pod status
// write for statusWritesSettle.
func settleStatusWrites(t *testing.T, ctx context.Context) {
	t.Helper()
	last, since := apiServerPodWrites(t, ctx).StatusPatches, time.Now()
	require.Eventually(t, func() bool {
		if now := apiServerPodWrites(t, ctx).StatusPatches; now != last {
			last, since = now, time.Now()
		}
		return time.Since(since) >= statusWritesSettle
	}, 2*time.Minute, 100*time.Millisecond, "the kubelet's pod status writes should stop")
}

// podNamespace is a namespace for t with the objects the pods of
// framework.Cluster.NewPodWithVolumes mount.
func podNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	ns := suite.Namespace(t, ctx)
	require.NoError(t, suite.Cluster.CreateVolumeSources(ctx, ns))
	return ns
}

// TestBenchBurst times a burst of pods to all Running on the kubelet as
// upstream runs it, and with the gate on and an Exec plugin, then a GRPC
// plugin, that admits every pod; rounds alternate between the three and
// the medians are compared, so drift on a shared machine hits all alike.
func TestBenchBurst(t *testing.T) {
	modes := []struct {
		name    string
		kubelet framework.KubeletOptions
		plugin  string
	}{
		{"without plugin", noPluginKubelet, "none"},
		{"with Exec plugin", pluginKubelet, pluginAllow},
		{"with GRPC plugin", pluginKubelet, pluginAllowGRPC},
	}
	took := make([][]time.Duration, len(modes))
	for round := range *burstRounds {
		for i, mode := range modes {
			useKubelet(t, mode.kubelet)
			d := burst(t, mode.plugin)
			t.Logf("round %d, %s: %d pods to Running in %s", round+1, mode.name, *burstPods, d.Round(time.Millisecond))
			took[i] = append(took[i], d)
		}
	}
	medians := make([]time.Duration, len(modes))
	for i, mode := range modes {
		medians[i] = framework.Percentile(took[i], 50)
		suite.Duration(t, fmt.Sprintf("%d pods to Running, %s (median of %d)", *burstPods, mode.name, *burstRounds), medians[i])
	}
	suite.Figure(t, "Exec with/without ratio", medians[1].Seconds()/medians[0].Seconds(), "x")
	suite.Figure(t, "GRPC with/without ratio", medians[2].Seconds()/medians[0].Seconds(), "x")
}

func burst(t *testing.T, plugin string) time.Duration {
	t.Helper()
	c := suite.Cluster
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns := suite.Namespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, ns)
	require.NoError(t, err)
	defer counter.Stop()
	start := time.Now()
	uids := createPods(t, ctx, ns, *burstPods, plugin, c.NewPod)
	require.Eventually(t, func() bool { return countPods(counter, framework.PodRunning) == len(uids) }, 9*time.Minute, 50*time.Millisecond)
	var last time.Time
	for _, uid := range uids {
		if at, _ := counter.RunningAt(uid); at.After(last) {
			last = at
		}
	}
	took := last.Sub(start)
	// Delete now (not at cleanup) so the next burst starts on an empty node.
	require.NoError(t, c.DeleteNamespace(ctx, ns))
	return took
}

// TestBenchHoldCost measures what holding pods costs: plugin calls and
// kubelet CPU over the window with 100 pods held by an Exec plugin, next to
// the same window with no pod (what the kubelet costs on its own, the
// reference the held pods' cost is counted from) and with 100 idle pods
// running.
func TestBenchHoldCost(t *testing.T) {
	useKubelet(t, pluginKubelet)
	c := suite.Cluster
	ctx, cancel := context.WithTimeout(context.Background(), 3**holdWindow+15*time.Minute)
	defer cancel()

	settleStatusWrites(t, ctx)
	_, idle := measure(t, ctx, c, *holdWindow, "", "idle")
	suite.Duration(t, fmt.Sprintf("no pod: kubelet CPU in %s", *holdWindow), idle.Self)
	suite.Figure(t, fmt.Sprintf("no pod: kubelet CPU in %s, share of one core", *holdWindow), 100*idle.Self.Seconds()/holdWindow.Seconds(), "%")

	held := suite.Namespace(t, ctx)
	counter, err := framework.CountPods(ctx, c.Client, held)
	require.NoError(t, err)
	uids := createPods(t, ctx, held, *costPods, pluginHold, c.NewPod)
	require.Eventually(t, func() bool {
		return countPods(counter, func(p *corev1.Pod) bool { return p.Status.Reason == reasonSoft }) == len(uids)
	}, 5*time.Minute, 100*time.Millisecond)
	counter.Stop()
	writesBefore := apiServerPodWrites(t, ctx)
	calls, cpu := measure(t, ctx, c, *holdWindow, c.PluginFile(pluginHold+".log"), "held")
	writes := apiServerPodWrites(t, ctx).Sub(writesBefore)
	suite.Figure(t, fmt.Sprintf("%d held pods: plugin calls in %s", len(uids), *holdWindow), float64(calls), "calls")
	suite.Duration(t, fmt.Sprintf("%d held pods: kubelet CPU in %s", len(uids), *holdWindow), cpu.Self)
	suite.Figure(t, fmt.Sprintf("%d held pods: kubelet CPU in %s, share of one core", len(uids), *holdWindow), 100*cpu.Self.Seconds()/holdWindow.Seconds(), "%")
	suite.Figure(t, fmt.Sprintf("%d held pods: kubelet CPU above no pod, share of one core", len(uids)), 100*(cpu.Self-idle.Self).Seconds()/holdWindow.Seconds(), "%")
	if calls > 0 {
		suite.Duration(t, fmt.Sprintf("%d held pods: kubelet CPU above no pod, per plugin call", len(uids)), (cpu.Self-idle.Self)/time.Duration(calls))
	}
	suite.Duration(t, fmt.Sprintf("%d held pods: plugin process CPU in %s", len(uids), *holdWindow), cpu.Children)
	// The API server counts every client's requests; in this window
	// nothing but the kubelet writes pod statuses or events.
	suite.Figure(t, fmt.Sprintf("%d held pods: pod status writes (pods/status PATCH) in %s", len(uids), *holdWindow), writes.StatusPatches, "writes")
	suite.Figure(t, fmt.Sprintf("%d held pods: event writes in %s", len(uids), *holdWindow), writes.Events, "writes")
	assert.Zero(t, writes.StatusPatches, "a held pod whose decision does not change costs the API server no status write")
	assert.Zero(t, writes.Events, "a held pod whose decision does not change costs the API server no event")
	require.NoError(t, c.DeleteNamespace(ctx, held))

	running := suite.Namespace(t, ctx)
	counter, err = framework.CountPods(ctx, c.Client, running)
	require.NoError(t, err)
	uids = createPods(t, ctx, running, *costPods, "none", c.NewPod)
	require.Eventually(t, func() bool { return countPods(counter, framework.PodRunning) == len(uids) }, 5*time.Minute, 100*time.Millisecond)
	counter.Stop()
	_, cpu = measure(t, ctx, c, *holdWindow, "", "running")
	suite.Duration(t, fmt.Sprintf("%d running pods: kubelet CPU in %s", len(uids), *holdWindow), cpu.Self)
	suite.Figure(t, fmt.Sprintf("%d running pods: kubelet CPU in %s, share of one core", len(uids), *holdWindow), 100*cpu.Self.Seconds()/holdWindow.Seconds(), "%")
}

func apiServerPodWrites(t *testing.T, ctx context.Context) framework.PodWrites {
	t.Helper()
	m, err := suite.Cluster.ScrapeAPIServerMetrics(ctx)
	require.NoError(t, err)
	return m.APIServerPodWrites()
}

// measure waits window and returns the plugin calls logged in logFile
// (if any) and the kubelet's CPU in that time; with -e2e.cost-profile it
// records the kubelet's CPU profile of the window as cost-<name>.pprof.
func measure(t *testing.T, ctx context.Context, c *framework.Cluster, window time.Duration, logFile, name string) (int, framework.CPUTimes) {
	t.Helper()
	pid := c.Kubelet.Process().Pid()
	callsBefore := pluginCalls(t, logFile)
	cpuBefore, err := framework.ProcessCPU(pid)
	require.NoError(t, err)
	if *costProfile {
		path, err := c.KubeletCPUProfile(ctx, window, "cost-"+name+".pprof")
		require.NoError(t, err)
		t.Logf("the kubelet's CPU profile of the %s window: %s", name, path)
	} else {
		time.Sleep(window)
	}
	cpuAfter, err := framework.ProcessCPU(pid)
	require.NoError(t, err)
	require.Equal(t, pid, c.Kubelet.Process().Pid(), "the kubelet restarted during the window")
	return pluginCalls(t, logFile) - callsBefore, cpuAfter.Sub(cpuBefore)
}

func pluginCalls(t *testing.T, logFile string) int {
	t.Helper()
	if logFile == "" {
		return 0
	}
	calls, err := framework.ReadPluginLog(logFile)
	require.NoError(t, err)
	return len(calls)
}

// createPods creates n pods of newPod labelled for plugin, in parallel.
func createPods(t *testing.T, ctx context.Context, ns string, n int, plugin string, newPod framework.PodMaker) []types.UID {
	t.Helper()
	c := suite.Cluster
	uids := make([]types.UID, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod, err := c.Client.CoreV1().Pods(ns).Create(ctx, newPod(ns, fmt.Sprintf("pod-%03d", i), framework.PluginLabels(plugin)), metav1.CreateOptions{})
			if err == nil {
				uids[i] = pod.UID
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return uids
}

func countPods(counter *framework.PodCounter, cond framework.PodCondition) int {
	n := 0
	for _, p := range counter.Pods() {
		if cond(p) {
			n++
		}
	}
	return n
}
