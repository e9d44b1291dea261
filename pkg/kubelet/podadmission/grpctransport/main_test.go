package grpctransport_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/podadmission/podadmission/test/testplugin/build"
)

// TestMain fails the tests if a goroutine is left when they end: a closed
// plugin leaves none.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		build.Cleanup()
		os.Exit(code)
	}))
}
