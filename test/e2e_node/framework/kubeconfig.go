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
