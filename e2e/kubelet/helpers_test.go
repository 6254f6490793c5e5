package kubelet_test

import (
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func intstrName(name string) intstr.IntOrString { return intstr.FromString(name) }

func readFile(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(b), err
}

func resourceQ(s string) resource.Quantity { return resource.MustParse(s) }

func resourceMi() resource.Quantity { return resource.MustParse("1Mi") }

func stringsContains(s, sub string) bool { return strings.Contains(s, sub) }
