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

// stateDirectory is Options.StateDir, where the Manager keeps what must outlive
// a kubelet restart (admitted_checkpoint.go, config_record.go) with the
// kubelet's checkpoint manager: a checksum, and a temporary file synced
// and renamed into place. It must be trusted like the configuration:
// whoever could write it could make the kubelet take a container for
// admitted, or a cut configuration file for the one last applied.
type stateDirectory struct {
	dir     string
	manager checkpointmanager.CheckpointManager
}

// openStateDir opens dir, which it creates (0700) if missing.
func openStateDir(dir string) (*stateDirectory, error) {
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
	return &stateDirectory{dir: dir, manager: manager}, nil
}

// path is the file of the checkpoint name.
func (s *stateDirectory) path(name string) string { return filepath.Join(s.dir, name) }

// read reads the checkpoint name into cp and verifies its checksum. It
// returns false, without an error, when there is no such checkpoint; an
// error names the file and the fault (untrusted, corrupt).
func (s *stateDirectory) read(name string, cp checkpointmanager.Checkpoint) (bool, error) {
	path := s.path(name)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if _, err := trust.CheckFile(path); err != nil {
		return false, err
	}
	if err := s.manager.GetCheckpoint(name, cp); err != nil {
		if errors.Is(err, checkpointerrors.ErrCheckpointNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// write writes cp as the checkpoint name, durably: the file is synced by
// the checkpoint manager before its rename, the directory's entry here.
func (s *stateDirectory) write(name string, cp checkpointmanager.Checkpoint) error {
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

// stateCheckpoint is a checkpoint's content: Data, the JSON of what is
// kept, and its checksum.
type stateCheckpoint struct {
	Data     string            `json:"data"`
	Checksum checksum.Checksum `json:"checksum"`
}

var _ checkpointmanager.Checkpoint = &stateCheckpoint{}

// newStateCheckpoint is the checkpoint of data, marshalled as JSON.
func newStateCheckpoint(data any) (*stateCheckpoint, error) {
	blob, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	cp := &stateCheckpoint{Data: string(blob)}
	cp.Checksum = checksum.New(cp.Data)
	return cp, nil
}

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
