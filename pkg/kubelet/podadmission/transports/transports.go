// Package transports creates the transport of a configured plugin by its
// type. It is the podadmission.PluginFactory the kubelet (and podadmctl)
// hand to the manager: package podadmission cannot import the transports
// itself, since the GRPC transport implements its Reevaluator.
package transports

import (
	"fmt"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/exec"
	"github.com/podadmission/podadmission/pkg/kubelet/podadmission/grpc"
)

// New returns the transport of cfg: an Exec plugin runs binDir/<cfg.Name>,
// a GRPC plugin connects to cfg.Endpoint (and is a podadmission.Reevaluator).
func New(cfg *configv1alpha1.PluginConfig, binDir string) (podadmission.Plugin, error) {
	switch cfg.Type {
	case configv1alpha1.ExecPluginType:
		return exec.New(cfg, binDir)
	case configv1alpha1.GRPCPluginType:
		return grpc.New(cfg)
	}
	return nil, fmt.Errorf("pod admission plugin %q: unknown type %q, want %q or %q", cfg.Name, cfg.Type, configv1alpha1.ExecPluginType, configv1alpha1.GRPCPluginType)
}
