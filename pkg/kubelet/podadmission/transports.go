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
	"fmt"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exectransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpctransport"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/transport"
)

// newTransport creates the transport of a configured plugin by its type:
// an Exec plugin runs binDir/<cfg.Name>, a GRPC plugin connects to
// cfg.Endpoint once started.
func newTransport(cfg *configv1alpha1.PluginConfig, binDir string) (transport.Plugin, error) {
	switch cfg.Type {
	case configv1alpha1.ExecPluginType:
		return exectransport.New(cfg, binDir)
	case configv1alpha1.GRPCPluginType:
		return grpctransport.New(cfg)
	}
	return nil, fmt.Errorf("unknown type %q, want %q or %q", cfg.Type, configv1alpha1.ExecPluginType, configv1alpha1.GRPCPluginType)
}
