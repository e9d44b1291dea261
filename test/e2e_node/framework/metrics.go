//go:build e2e_node

package framework

import (
	"context"
	"fmt"
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
	tlsConfig, err := clientTLS(c.ControlPlane.PKI.CA.CertPath, c.ControlPlane.PKI.Admin)
	if err != nil {
		return nil, err
	}
	// The kubelet serves a self-signed certificate it generated at start.
	tlsConfig.InsecureSkipVerify = true
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Kubelet.ServerURL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", c.Kubelet.ServerURL, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing kubelet metrics: %w", err)
	}
	return families, nil
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
