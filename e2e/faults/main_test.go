package faults

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
)

// cluster is the suite's cluster, up for the whole run.
var cluster *haCluster

// suiteTimeout bounds the whole suite, below the Makefile's go test -timeout:
// the suite resets the nodes itself rather than be killed with them running.
const suiteTimeout = 38 * time.Minute

func TestMain(m *testing.M) {
	if os.Getenv("TRIREME_E2E_FAULTS") != "1" {
		// The ledger's own tests run; TestFaults skips.
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	adm, err := testcluster.Binary("triremeadm")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	root, err := os.MkdirTemp("", "trireme-e2e-faults-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	installAdm, imageDir := adm, testcluster.ImageDir()
	if from := os.Getenv(upgradeFromEnv); from != "" {
		// The upgrade test's cluster: installed by the earlier build.
		installAdm, imageDir = filepath.Join(from, "triremeadm"), filepath.Join(filepath.Dir(from), "images")
	}
	cluster = newCluster(root, adm, installAdm, imageDir)
	var once sync.Once
	teardown := func() int {
		code := 0
		once.Do(func() {
			start := time.Now()
			if err := cluster.down(); err != nil {
				fmt.Printf("e2e/faults: reset left something behind:\n%v\n", err)
				code = 1
			}
			_ = os.RemoveAll(root)
			logf("reset of the 4 nodes: %s", since(start))
		})
		return code
	}
	abort := func(why string) {
		logf("%s: resetting the nodes", why)
		teardown()
		os.Exit(1)
	}
	watchdog := time.AfterFunc(suiteTimeout, func() { abort(fmt.Sprintf("suite still running after %s", suiteTimeout)) })
	defer watchdog.Stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() { abort(fmt.Sprint("signal ", <-sigs)) }()

	code := 0
	if err := cluster.up(context.Background()); err != nil {
		fmt.Printf("e2e/faults: setup: %v\n", err)
		code = 1
	} else {
		code = m.Run()
		if code != 0 {
			cluster.dumpFailure()
		}
	}
	watchdog.Stop()
	signal.Stop(sigs)
	if c := teardown(); c != 0 {
		code = c
	}
	return code
}
