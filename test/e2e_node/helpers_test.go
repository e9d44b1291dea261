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
	return suite.Namespace(t, ctx)
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
	suite.Figure(t, name, value, unit)
}

func durationFigure(t *testing.T, name string, d time.Duration) {
	t.Helper()
	suite.Duration(t, name, d)
}

// testContext is a context that ends with t (or after timeout).
func testContext(t *testing.T, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}
