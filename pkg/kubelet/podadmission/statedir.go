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

package podadmission

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager/checksum"
	checkpointerrors "k8s.io/kubernetes/pkg/kubelet/checkpointmanager/errors"
	utiljson "sigs.k8s.io/json"

	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/trust"
)

// The state directory (Options.StateDir) holds what the Manager must know
// again after a kubelet restart or a power loss: the containers the
// plugins admitted (admitted_checkpoint.go) and the configuration last
// applied (applied_record.go). What is there decides what the kubelet
// enforces, so it is root's and closed like the configuration: created
// 0700, its path and every file checked (package trust) before it is read.
// Its files are written with the kubelet's checkpoint manager (a checksum,
// a 0600 temporary file synced and renamed into place), and the directory
// synced after, so that after a power loss a file holds what it held
// before the write or what was written, whole.

// stateStore is an open, trusted state directory.
type stateStore struct {
	dir     string
	manager checkpointmanager.CheckpointManager
}

// openStateDir creates dir (0700) when it is missing and checks that it is
// trusted: whoever could write in it could make the kubelet take a
// container for admitted, or a configuration for the one last applied.
func openStateDir(dir string) (*stateStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pod admission: state directory: %w", err)
	}
	if err := trust.CheckDir(dir); err != nil {
		return nil, fmt.Errorf("pod admission: state directory: %w", err)
	}
	manager, err := checkpointmanager.NewCheckpointManager(dir)
	if err != nil {
		return nil, fmt.Errorf("pod admission: state directory: %w", err)
	}
	return &stateStore{dir: dir, manager: manager}, nil
}

// path is the file name of the directory.
func (s *stateStore) path(name string) string { return filepath.Join(s.dir, name) }

// load decodes the file name into data, strictly, after checking that the
// file is trusted and its checksum matches. It returns false, without an
// error, when there is no such file. An error names the file.
func (s *stateStore) load(name string, data any) (bool, error) {
	path := s.path(name)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if _, err := trust.CheckFile(path); err != nil {
		return false, err
	}
	var cp stateCheckpoint
	if err := s.manager.GetCheckpoint(name, &cp); err != nil {
		if errors.Is(err, checkpointerrors.ErrCheckpointNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if err := strictJSON([]byte(cp.Data), data); err != nil {
		return false, fmt.Errorf("%s: data: %w", path, err)
	}
	return true, nil
}

// save writes data as the file name, durably: the file is synced by the
// checkpoint manager, the directory's entry here.
func (s *stateStore) save(name string, data any) error {
	encoded, err := json.Marshal(data)
	if err != nil {
		return err
	}
	cp := &stateCheckpoint{Data: string(encoded)}
	cp.Checksum = checksum.New(cp.Data)
	if err := s.manager.CreateCheckpoint(name, cp); err != nil {
		return err
	}
	dir, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// stateCheckpoint is a state file's content: Data, the JSON of what is
// kept, and its checksum.
type stateCheckpoint struct {
	Data     string            `json:"data"`
	Checksum checksum.Checksum `json:"checksum"`
}

var _ checkpointmanager.Checkpoint = &stateCheckpoint{}

func (c *stateCheckpoint) MarshalCheckpoint() ([]byte, error) { return json.Marshal(c) }

func (c *stateCheckpoint) UnmarshalCheckpoint(blob []byte) error {
	return strictJSON(blob, c)
}

func (c *stateCheckpoint) VerifyChecksum() error { return c.Checksum.Verify(c.Data) }

// strictJSON unmarshals data into obj, failing on unknown or duplicate
// fields: a file that is not what this code wrote is corrupt.
func strictJSON(data []byte, obj any) error {
	strictErrs, err := utiljson.UnmarshalStrict(data, obj)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}
