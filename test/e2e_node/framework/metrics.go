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
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of the kubelet's /metrics, by metric family name.
type Metrics map[string]*dto.MetricFamily

// ScrapeKubeletMetrics reads the kubelet's /metrics with the admin client
// certificate.
func (c *Cluster) ScrapeKubeletMetrics(ctx context.Context) (Metrics, error) {
	body, err := c.kubeletGet(ctx, "/metrics", 10*time.Second)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return parseMetrics(body, "kubelet")
}

// kubeletGet reads path from the kubelet's server with the admin client
// certificate; the caller closes the body.
func (c *Cluster) kubeletGet(ctx context.Context, path string, timeout time.Duration) (io.ReadCloser, error) {
	tlsConfig, err := clientTLS(c.ControlPlane.PKI.CA.CertPath, c.ControlPlane.PKI.Admin)
	if err != nil {
		return nil, err
	}
	// The kubelet serves a self-signed certificate it generated at start.
	tlsConfig.InsecureSkipVerify = true
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: timeout}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Kubelet.ServerURL+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s%s: %s", c.Kubelet.ServerURL, path, resp.Status)
	}
	return resp.Body, nil
}

// ScrapeAPIServerMetrics reads the API server's /metrics with the admin
// client.
func (c *Cluster) ScrapeAPIServerMetrics(ctx context.Context) (Metrics, error) {
	data, err := c.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics of the API server: %w", err)
	}
	return parseMetrics(bytes.NewReader(data), "API server")
}

func parseMetrics(r io.Reader, what string) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing %s metrics: %w", what, err)
	}
	return families, nil
}

// PodWrites counts the writes to the API server that a kubelet makes for
// pods it holds or runs: pod status patches and events (created or
// patched, in both event APIs), from an API server's /metrics.
type PodWrites struct {
	StatusPatches, Events float64
}

// APIServerPodWrites returns the pod writes m counts since the API server
// started (apiserver_request_total).
func (m Metrics) APIServerPodWrites() PodWrites {
	const requests = "apiserver_request_total"
	w := PodWrites{StatusPatches: m.Sum(requests, map[string]string{"resource": "pods", "subresource": "status", "verb": "PATCH"})}
	for _, verb := range []string{"POST", "PATCH"} {
		w.Events += m.Sum(requests, map[string]string{"resource": "events", "verb": verb})
	}
	return w
}

// Sub is w minus before.
func (w PodWrites) Sub(before PodWrites) PodWrites {
	return PodWrites{StatusPatches: w.StatusPatches - before.StatusPatches, Events: w.Events - before.Events}
}

// Value is the value of the counter or gauge sample of family whose labels
// include labels (0 and false when there is none). For a histogram it is
// the sample count.
func (m Metrics) Value(family string, labels map[string]string) (float64, bool) {
	f, ok := m[family]
	if !ok {
		return 0, false
	}
	for _, metric := range f.GetMetric() {
		if !hasLabels(metric, labels) {
			continue
		}
		switch {
		case metric.Counter != nil:
			return metric.Counter.GetValue(), true
		case metric.Gauge != nil:
			return metric.Gauge.GetValue(), true
		case metric.Histogram != nil:
			return float64(metric.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// Sum adds up Value over every sample of family whose labels include
// labels, e.g. a histogram's count over all its results.
func (m Metrics) Sum(family string, labels map[string]string) float64 {
	var sum float64
	for _, metric := range m[family].GetMetric() {
		if !hasLabels(metric, labels) {
			continue
		}
		switch {
		case metric.Counter != nil:
			sum += metric.Counter.GetValue()
		case metric.Gauge != nil:
			sum += metric.Gauge.GetValue()
		case metric.Histogram != nil:
			sum += float64(metric.Histogram.GetSampleCount())
		}
	}
	return sum
}

// Series lists the label sets of family's samples, for messages.
func (m Metrics) Series(family string) []string {
	var out []string
	for _, metric := range m[family].GetMetric() {
		var labels []string
		for _, l := range metric.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		out = append(out, "{"+strings.Join(labels, ",")+"}")
	}
	sort.Strings(out)
	return out
}

func hasLabels(metric *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range metric.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// HistogramSum adds up the sample sums of family's histogram samples whose
// labels include labels.
func (m Metrics) HistogramSum(family string, labels map[string]string) float64 {
	var sum float64
	for _, metric := range m[family].GetMetric() {
		if metric.Histogram != nil && hasLabels(metric, labels) {
			sum += metric.Histogram.GetSampleSum()
		}
	}
	return sum
}
