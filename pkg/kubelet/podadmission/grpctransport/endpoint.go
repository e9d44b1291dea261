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

package grpctransport

import (
	"errors"
	"fmt"
	"os"
)

// diagnoseSocket says what is wrong with the socket at path, when a plain
// file check can tell, to replace a generic connection error.
func diagnoseSocket(path string) error {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("socket %s does not exist; is the plugin running?", path)
	case err != nil:
		return fmt.Errorf("socket %s: %w", path, err)
	case info.Mode().Type() != os.ModeSocket:
		return fmt.Errorf("%s is not a unix socket", path)
	}
	return nil
}
