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

package crirecord

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Call is one recorded CRI call that creates, starts, stops or removes
// something for a pod, written as one JSON line to the journal.
type Call struct {
	// Started is when the kubelet made the call, Time when it returned.
	Started       time.Time `json:"started"`
	Time          time.Time `json:"time"`
	Method        string    `json:"method"`
	PodUID        string    `json:"podUID,omitempty"`
	PodNamespace  string    `json:"podNamespace,omitempty"`
	PodName       string    `json:"podName,omitempty"`
	SandboxID     string    `json:"sandboxID,omitempty"`
	ContainerID   string    `json:"containerID,omitempty"`
	ContainerName string    `json:"containerName,omitempty"`
	Image         string    `json:"image,omitempty"`
	Error         string    `json:"error,omitempty"`
}

// journalWriter appends calls to the journal file; one write per line, so
// a reader never sees half a call.
type journalWriter struct {
	mu   sync.Mutex
	file *os.File
}

func openJournalWriter(path string) (*journalWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening CRI journal: %w", err)
	}
	return &journalWriter{file: f}, nil
}

func (w *journalWriter) write(c Call) error {
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.file.Write(append(line, '\n'))
	return err
}

func (w *journalWriter) close() error {
	return w.file.Close()
}

// ReadJournal returns every call recorded so far, oldest first.
func ReadJournal(path string) ([]Call, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening CRI journal: %w", err)
	}
	defer f.Close()

	var calls []Call
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		var c Call
		if err := json.Unmarshal(scanner.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("CRI journal %s line %d: %w", path, len(calls)+1, err)
		}
		calls = append(calls, c)
	}
	return calls, scanner.Err()
}

// Filter returns the calls of the given method (every method if empty)
// made for the pod with the given UID (every pod if empty) that succeeded.
func Filter(calls []Call, method, podUID string) []Call {
	var out []Call
	for _, c := range calls {
		if c.Error != "" {
			continue
		}
		if method != "" && c.Method != method {
			continue
		}
		if podUID != "" && c.PodUID != podUID {
			continue
		}
		out = append(out, c)
	}
	return out
}
