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
	"fmt"
	"net"
)

// clusterPKI is every certificate the cluster uses, issued by one CA.
type clusterPKI struct {
	CA                 *CA
	APIServerServing   CertKeyPair
	APIServerToKubelet CertKeyPair
	Admin              CertKeyPair
	ControllerManager  CertKeyPair
	Scheduler          CertKeyPair
	Kubelet            CertKeyPair
	ServiceAccount     CertKeyPair
}

// newClusterPKI issues the certificates; nodeName is the kubelet's node,
// whose client certificate the Node authorizer recognises.
func newClusterPKI(dir, nodeName string) (*clusterPKI, error) {
	ca, err := NewCA(dir)
	if err != nil {
		return nil, err
	}
	p := &clusterPKI{CA: ca}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	requests := []struct {
		into *CertKeyPair
		req  CertRequest
	}{
		{&p.APIServerServing, CertRequest{Name: "apiserver", CommonName: "kube-apiserver", Server: true,
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, IPs: loopback}},
		{&p.APIServerToKubelet, CertRequest{Name: "apiserver-kubelet-client", CommonName: "kube-apiserver-kubelet-client",
			Organization: []string{"system:masters"}, Client: true}},
		{&p.Admin, CertRequest{Name: "admin", CommonName: "e2e-admin", Organization: []string{"system:masters"}, Client: true}},
		{&p.ControllerManager, CertRequest{Name: "controller-manager", CommonName: "system:kube-controller-manager", Client: true}},
		{&p.Scheduler, CertRequest{Name: "scheduler", CommonName: "system:kube-scheduler", Client: true}},
		{&p.Kubelet, CertRequest{Name: "kubelet", CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}, Client: true}},
	}
	for _, r := range requests {
		pair, err := ca.Issue(dir, r.req)
		if err != nil {
			return nil, err
		}
		*r.into = pair
	}
	if p.ServiceAccount, err = NewServiceAccountKey(dir); err != nil {
		return nil, fmt.Errorf("service account key: %w", err)
	}
	return p, nil
}
