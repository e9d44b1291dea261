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
	"strings"
	"time"
)

// KubeletLogLine is a line of the kubelet's log (klog's text format) and
// the time klog stamped on it.
type KubeletLogLine struct {
	Time time.Time
	Text string
}

// klogTimeLayout is the time in a klog header:
// "I1129 17:20:17.284872    1422 file.go:60] message".
const klogTimeLayout = "0102 15:04:05.000000"

// KubeletLogLines returns the lines of the kubelet's log, across all its
// restarts in this run, that contain every one of substrings, in order.
// klog stamps local time without a year: the year is taken from now, which
// is right for a run that does not span New Year.
func (c *Cluster) KubeletLogLines(substrings ...string) ([]KubeletLogLine, error) {
	path := c.Layout.LogPath("kubelet")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	year := time.Now().Year()
	var lines []KubeletLogLine
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64<<10), 4<<20)
	for scanner.Scan() {
		text := scanner.Text()
		if !containsAll(text, substrings) {
			continue
		}
		if len(text) < 1+len(klogTimeLayout) {
			return nil, fmt.Errorf("%s: line without a klog header: %q", path, text)
		}
		at, err := time.ParseInLocation(klogTimeLayout, text[1:1+len(klogTimeLayout)], time.Local)
		if err != nil {
			return nil, fmt.Errorf("%s: line without a klog header: %q: %w", path, text, err)
		}
		at = time.Date(year, at.Month(), at.Day(), at.Hour(), at.Minute(), at.Second(), at.Nanosecond(), time.Local)
		lines = append(lines, KubeletLogLine{Time: at, Text: text})
	}
	return lines, scanner.Err()
}

func containsAll(s string, substrings []string) bool {
	for _, sub := range substrings {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
