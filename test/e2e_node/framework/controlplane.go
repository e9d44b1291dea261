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
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// placeholderAdvertiseAddress is what the apiserver advertises in the
// kubernetes Service endpoints: it refuses a loopback address, and nothing
// in this cluster dials the service (TEST-NET-1, RFC 5737).
const placeholderAdvertiseAddress = "192.0.2.1"

// ControlPlane is etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, all on loopback.
type ControlPlane struct {
	APIServerURL string
	PKI          *clusterPKI
	// KubeletKubeconfig is the kubelet's credentials: the node's client
	// certificate.
	KubeletKubeconfig string
	AdminKubeconfig   string
	RESTConfig        *rest.Config
	// AuditLog is the API server's audit log of the node's requests for
	// secrets, configMaps and tokens (audit.go), JSON lines.
	AuditLog string

	processes []*Process
}

// startControlPlane starts the components in dependency order and returns
// once each is healthy.
func startControlPlane(ctx context.Context, layout Layout, bins Binaries, nodeName string) (*ControlPlane, error) {
	pki, err := newClusterPKI(layout.PKI, nodeName)
	if err != nil {
		return nil, fmt.Errorf("issuing certificates: %w", err)
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	etcdClientPort, etcdPeerPort, apiPort, kcmPort, schedulerPort := ports[0], ports[1], ports[2], ports[3], ports[4]

	cp := &ControlPlane{
		APIServerURL: "https://127.0.0.1:" + strconv.Itoa(apiPort),
		PKI:          pki,
		AuditLog:     layout.LogPath("kube-apiserver-audit"),
	}
	auditPolicyPath := layout.StatePath("audit-policy.yaml")
	if err := writeAuditPolicy(auditPolicyPath, nodeName); err != nil {
		return nil, err
	}
	cp.RESTConfig = restConfig(cp.APIServerURL, pki.CA.CertPath, pki.Admin)
	kubeconfigs := map[string]CertKeyPair{
		"admin":              pki.Admin,
		"controller-manager": pki.ControllerManager,
		"scheduler":          pki.Scheduler,
		"kubelet":            pki.Kubelet,
	}
	for name, creds := range kubeconfigs {
		if err := writeKubeconfig(filepath.Join(layout.PKI, name+".kubeconfig"), cp.APIServerURL, pki.CA.CertPath, creds); err != nil {
			return nil, err
		}
	}
	cp.AdminKubeconfig = filepath.Join(layout.PKI, "admin.kubeconfig")
	cp.KubeletKubeconfig = filepath.Join(layout.PKI, "kubelet.kubeconfig")

	// etcd
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClientPort)
	_, err = cp.start(ctx, ProcessSpec{
		Name:   "etcd",
		Binary: bins.Etcd,
		Args: []string{
			"--data-dir=" + layout.StatePath("etcd"),
			"--listen-client-url=" + etcdURL,
			"--listen-peer-url=http://127.0.0.1:" + strconv.Itoa(etcdPeerPort),
		},
		LogPath: layout.LogPath("etcd"),
	}, httpOK(http.DefaultClient, etcdURL+"/health"))
	if err != nil {
		return cp, err
	}

	// kube-apiserver
	adminTLS, err := clientTLS(pki.CA.CertPath, pki.Admin)
	if err != nil {
		return cp, err
	}
	_, err = cp.start(ctx, ProcessSpec{
		Name:   "kube-apiserver",
		Binary: bins.APIServer,
		Args: []string{
			"--etcd-servers=" + etcdURL,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(apiPort),
			"--advertise-address=" + placeholderAdvertiseAddress,
			"--cert-dir=" + layout.StatePath("apiserver"),
			"--tls-cert-file=" + pki.APIServerServing.CertPath,
			"--tls-private-key-file=" + pki.APIServerServing.KeyPath,
			"--client-ca-file=" + pki.CA.CertPath,
			"--kubelet-client-certificate=" + pki.APIServerToKubelet.CertPath,
			"--kubelet-client-key=" + pki.APIServerToKubelet.KeyPath,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + pki.ServiceAccount.CertPath,
			"--service-account-signing-key-file=" + pki.ServiceAccount.KeyPath,
			"--service-cluster-ip-range=10.0.0.0/24",
			"--authorization-mode=Node,RBAC",
			// On top of the default plugins, ServiceAccount among them: it
			// gives every pod that does not opt out a kube-api-access-*
			// token volume, as on a real cluster.
			"--enable-admission-plugins=NodeRestriction",
			"--audit-policy-file=" + auditPolicyPath,
			"--audit-log-path=" + cp.AuditLog,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
			"--allow-privileged=true",
			"--profiling=false",
			"--v=1",
		},
		LogPath: layout.LogPath("kube-apiserver"),
	}, httpOK(&http.Client{Transport: &http.Transport{TLSClientConfig: adminTLS}}, cp.APIServerURL+"/readyz"))
	if err != nil {
		return cp, err
	}

	// kube-controller-manager and kube-scheduler need only the apiserver.
	_, err = cp.start(ctx, ProcessSpec{
		Name:   "kube-controller-manager",
		Binary: bins.ControllerManager,
		Args: []string{
			"--kubeconfig=" + filepath.Join(layout.PKI, "controller-manager.kubeconfig"),
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(kcmPort),
			"--cert-dir=" + layout.StatePath("controller-manager"),
			"--leader-elect=false",
			// Each controller runs as its own service account, with the
			// bootstrap RBAC role it needs (node lifecycle, publishers...).
			"--use-service-account-credentials=true",
			"--flex-volume-plugin-dir=" + layout.StatePath("controller-manager", "volume-plugins"),
			"--service-account-private-key-file=" + pki.ServiceAccount.KeyPath,
			"--root-ca-file=" + pki.CA.CertPath,
			"--profiling=false",
			"--v=1",
		},
		LogPath: layout.LogPath("kube-controller-manager"),
	}, httpOK(insecureHTTPClient(), "https://127.0.0.1:"+strconv.Itoa(kcmPort)+"/healthz"))
	if err != nil {
		return cp, err
	}
	_, err = cp.start(ctx, ProcessSpec{
		Name:   "kube-scheduler",
		Binary: bins.Scheduler,
		Args: []string{
			"--kubeconfig=" + filepath.Join(layout.PKI, "scheduler.kubeconfig"),
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(schedulerPort),
			"--cert-dir=" + layout.StatePath("scheduler"),
			"--leader-elect=false",
			"--profiling=false",
			"--v=1",
		},
		LogPath: layout.LogPath("kube-scheduler"),
	}, httpOK(insecureHTTPClient(), "https://127.0.0.1:"+strconv.Itoa(schedulerPort)+"/healthz"))
	return cp, err
}

func (cp *ControlPlane) start(ctx context.Context, spec ProcessSpec, ready func(context.Context) error) (*Process, error) {
	p, err := StartProcess(spec)
	if err != nil {
		return nil, err
	}
	cp.processes = append(cp.processes, p)
	readyCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	return p, p.WaitReady(readyCtx, ready)
}

// Processes lists the running components, in start order.
func (cp *ControlPlane) Processes() []*Process { return cp.processes }

// stop stops the components in reverse start order. The grace is short:
// the apiserver would otherwise wait for the harness's own open watches,
// and nothing of the cluster outlives the run.
func (cp *ControlPlane) stop() {
	for i := len(cp.processes) - 1; i >= 0; i-- {
		cp.processes[i].Stop(3 * time.Second)
	}
}

// clientTLS is a TLS client configuration with a client certificate.
func clientTLS(caPath string, creds CertKeyPair) (*tls.Config, error) {
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", caPath)
	}
	cert, err := tls.LoadX509KeyPair(creds.CertPath, creds.KeyPath)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}, nil
}
