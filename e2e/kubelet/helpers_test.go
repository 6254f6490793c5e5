package kubelet_test

import (
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func intstrName(name string) intstr.IntOrString { return intstr.FromString(name) }

func readFile(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(b), err
}
