package controllermanager_test

import (
	"testing"

	"k8s.io/client-go/kubernetes"
)

func testPersistentVolume(t *testing.T, cs kubernetes.Interface) {}
