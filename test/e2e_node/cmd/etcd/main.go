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

// Command etcd runs a single-member embedded etcd for the node e2e cluster,
// so the harness needs no etcd binary from outside this repository. It
// serves plain HTTP on loopback only and stops cleanly on SIGTERM/SIGINT.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for the etcd data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "URL to serve clients on")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "URL to serve the (single) peer on")
	klog.InitFlags(nil)
	flag.Parse()

	if err := run(*dataDir, *clientURL, *peerURL); err != nil {
		klog.ErrorS(err, "etcd failed")
		os.Exit(1)
	}
}

func run(dataDir, clientURL, peerURL string) error {
	if dataDir == "" {
		return fmt.Errorf("--data-dir is required")
	}
	client, err := url.Parse(clientURL)
	if err != nil {
		return fmt.Errorf("--listen-client-url: %w", err)
	}
	peer, err := url.Parse(peerURL)
	if err != nil {
		return fmt.Errorf("--listen-peer-url: %w", err)
	}

	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// The cluster lives for one test run: no need to fsync every write,
	// which dominates start-up and write latency on these VMs.
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "warn"

	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("starting etcd: %w", err)
	}
	defer etcd.Close()

	select {
	case <-etcd.Server.ReadyNotify():
		klog.InfoS("etcd is ready", "clientURL", clientURL, "dataDir", dataDir)
	case <-time.After(60 * time.Second):
		etcd.Server.Stop()
		return fmt.Errorf("etcd did not become ready within 60s")
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-signals:
		klog.InfoS("stopping etcd", "signal", sig)
		return nil
	case err := <-etcd.Err():
		return fmt.Errorf("etcd stopped serving: %w", err)
	}
}
