// Package scheme holds the runtime.Scheme of the pod admission plugin
// configuration and decodes configuration files strictly.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
)

var (
	// Scheme knows every version of PodAdmissionConfiguration and its
	// defaulting functions.
	Scheme = runtime.NewScheme()
	// Codecs decode strictly: unknown and duplicate fields are errors, so a
	// typo in a configuration file never silently drops a setting.
	Codecs = serializer.NewCodecFactory(Scheme, serializer.EnableStrict)
)

func init() {
	utilruntime.Must(configv1alpha1.AddToScheme(Scheme))
}
