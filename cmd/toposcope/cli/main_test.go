package cli_test

import (
	"os"
	"testing"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// kube is the real etcd + kube-apiserver of this test binary, started on
// first use.
var kube = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(kube.Run(m)) }
