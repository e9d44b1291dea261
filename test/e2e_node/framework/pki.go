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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity outlives any run; the certificates are thrown away with it.
const certValidity = 48 * time.Hour

// CA issues the cluster's certificates.
type CA struct {
	Cert     *x509.Certificate
	Key      crypto.Signer
	CertPath string
}

// CertKeyPair is where an issued certificate and its key were written.
type CertKeyPair struct {
	CertPath string
	KeyPath  string
}

// NewCA creates a self-signed CA and writes its certificate to dir/ca.crt.
func NewCA(dir string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "podadmission-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "ca.crt")
	if err := writePEM(path, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPath: path}, nil
}

// CertRequest describes a certificate to issue.
type CertRequest struct {
	// Name is the file name stem: <dir>/<Name>.crt and .key.
	Name         string
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Server       bool
	Client       bool
}

// Issue signs a certificate for req and writes it with its key into dir.
func (ca *CA) Issue(dir string, req CertRequest) (CertKeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return CertKeyPair{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: req.CommonName, Organization: req.Organization},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     req.DNSNames,
		IPAddresses:  req.IPs,
	}
	if req.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if req.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return CertKeyPair{}, fmt.Errorf("issuing %s: %w", req.Name, err)
	}
	pair := CertKeyPair{
		CertPath: filepath.Join(dir, req.Name+".crt"),
		KeyPath:  filepath.Join(dir, req.Name+".key"),
	}
	if err := writePEM(pair.CertPath, "CERTIFICATE", der); err != nil {
		return CertKeyPair{}, err
	}
	if err := writeKey(pair.KeyPath, key); err != nil {
		return CertKeyPair{}, err
	}
	return pair, nil
}

// NewServiceAccountKey writes the key pair the apiserver signs and checks
// service account tokens with.
func NewServiceAccountKey(dir string) (CertKeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return CertKeyPair{}, err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return CertKeyPair{}, err
	}
	pair := CertKeyPair{CertPath: filepath.Join(dir, "sa.pub"), KeyPath: filepath.Join(dir, "sa.key")}
	if err := writePEM(pair.CertPath, "PUBLIC KEY", pub); err != nil {
		return CertKeyPair{}, err
	}
	return pair, writeKey(pair.KeyPath, key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, blockType string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}
