//go:build e2e_node

package framework

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig that reaches server with the client
// certificate in creds and trusts caPath.
func writeKubeconfig(path, server, caPath string, creds CertKeyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caPath}
	cfg.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{ClientCertificate: creds.CertPath, ClientKey: creds.KeyPath}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}

// restConfig is what the tests and the harness talk to the apiserver with.
func restConfig(server, caPath string, creds CertKeyPair) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile:   caPath,
			CertFile: creds.CertPath,
			KeyFile:  creds.KeyPath,
		},
		// The tests create pods in bursts; the default 5 QPS would measure
		// the client, not the kubelet.
		QPS:   200,
		Burst: 400,
	}
}
