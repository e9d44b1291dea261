package transportbench

import "k8s.io/apimachinery/pkg/util/intstr"

var (
	ptrTrue    = func() *bool { t := true; return &t }()
	intstrPort = intstr.FromInt32(8080)
)
