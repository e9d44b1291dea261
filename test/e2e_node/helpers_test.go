//go:build e2e_node

package e2enode

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/podadmission/podadmission/test/e2e_node/crirecord"
)

// newNamespace creates a namespace for t and deletes it when t ends.
func newNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	ns, err := suite.Cluster.CreateNamespace(ctx, t.Name())
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := suite.Cluster.DeleteNamespace(ctx, ns); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	return ns
}

// criCalls reads the CRI journal.
func criCalls(t *testing.T) []crirecord.Call {
	t.Helper()
	calls, err := crirecord.ReadJournal(suite.Cluster.CRIJournal())
	require.NoError(t, err)
	return calls
}

// figure records a measured figure of t and logs it.
func figure(t *testing.T, name string, value float64, unit string) {
	t.Helper()
	t.Logf("figure: %s = %.3f %s", name, value, unit)
	suite.Figures.Add(t.Name(), name, value, unit)
}

func durationFigure(t *testing.T, name string, d time.Duration) {
	t.Helper()
	figure(t, name, d.Seconds(), "s")
}

// testContext is a context that ends with t (or after timeout).
func testContext(t *testing.T, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}
