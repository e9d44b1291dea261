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
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Figure is one measured number of a run, printed at the end and saved in
// the artifacts (figures.json) for the benchmark report.
type Figure struct {
	Test  string  `json:"test"`
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Figures collects the figures of a run; safe for parallel tests.
type Figures struct {
	mu    sync.Mutex
	items []Figure
}

// Add records a figure.
func (f *Figures) Add(test, name string, value float64, unit string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, Figure{Test: test, Name: name, Value: value, Unit: unit})
}

// AddDuration records a duration in seconds.
func (f *Figures) AddDuration(test, name string, d time.Duration) {
	f.Add(test, name, d.Seconds(), "s")
}

// All returns the figures sorted by test, then name.
func (f *Figures) All() []Figure {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]Figure(nil), f.items...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Test != out[j].Test {
			return out[i].Test < out[j].Test
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// InOrder returns the figures in the order they were recorded.
func (f *Figures) InOrder() []Figure {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Figure(nil), f.items...)
}

// Print writes the figures as a table.
func (f *Figures) Print(w io.Writer) {
	fmt.Fprintln(w, "=== measured figures")
	for _, fig := range f.All() {
		fmt.Fprintf(w, "    %-40s %-40s %12.3f %s\n", fig.Test, fig.Name, fig.Value, fig.Unit)
	}
}

// Save writes the figures as JSON.
func (f *Figures) Save(path string) error {
	data, err := json.MarshalIndent(f.All(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
