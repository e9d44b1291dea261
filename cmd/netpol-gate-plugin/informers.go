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

package main

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// watchedCluster is the gate's view of the cluster: NetworkPolicy and
// Namespace informers, feeding the gate's rechecks.
type watchedCluster struct {
	factory informers.SharedInformerFactory
	synced  []cache.InformerSynced
}

// newGateWithInformers creates the gate on informers of client.
func newGateWithInformers(cfg gateConfig, client kubernetes.Interface, factory informers.SharedInformerFactory, pusher reevaluator) (*gate, *watchedCluster, error) {
	policies := factory.Networking().V1().NetworkPolicies()
	namespaces := factory.Core().V1().Namespaces()
	w := &watchedCluster{
		factory: factory,
		synced:  []cache.InformerSynced{policies.Informer().HasSynced, namespaces.Informer().HasSynced},
	}
	listPolicies := func(ctx context.Context, namespace string) ([]*networkingv1.NetworkPolicy, error) {
		// ResourceVersion "" is a consistent read: newer than anything
		// the informer may lag behind.
		list, err := client.NetworkingV1().NetworkPolicies(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := make([]*networkingv1.NetworkPolicy, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	}
	g := newGate(cfg, clock.RealClock{}, policies.Lister(), namespaces.Lister(), w.hasSynced, listPolicies, pusher)

	if _, err := policies.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { g.policySeen(obj.(*networkingv1.NetworkPolicy)) },
		UpdateFunc: func(_, obj any) { g.policySeen(obj.(*networkingv1.NetworkPolicy)) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if np, ok := obj.(*networkingv1.NetworkPolicy); ok {
				g.policyGone(np.UID)
			}
		},
	}); err != nil {
		return nil, nil, err
	}
	// Namespace labels decide --exempt-namespace-selector.
	if _, err := namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { g.requestRecheck() },
		UpdateFunc: func(any, any) { g.requestRecheck() },
	}); err != nil {
		return nil, nil, err
	}
	return g, w, nil
}

func (w *watchedCluster) hasSynced() bool {
	for _, synced := range w.synced {
		if !synced() {
			return false
		}
	}
	return true
}

// start starts the informers and tells the gate when they have synced.
func (w *watchedCluster) start(ctx context.Context, g *gate) {
	w.factory.Start(ctx.Done())
	go func() {
		if cache.WaitForNamedCacheSync("netpol-gate", ctx.Done(), w.synced...) {
			g.cachesSynced(ctx)
		} else {
			klog.FromContext(ctx).Info("Stopped before the caches synced")
		}
	}()
}
