package grpc_test

import (
	"os"
	"testing"

	"github.com/podadmission/podadmission/test/testplugin/build"
)

func TestMain(m *testing.M) {
	code := m.Run()
	build.Cleanup()
	os.Exit(code)
}
