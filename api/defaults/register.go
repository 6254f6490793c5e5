package defaults

import "k8s.io/apimachinery/pkg/runtime"

// AddToScheme registers a defaulting function for every served external type
// (and the matching list types) with s.
func AddToScheme(s *runtime.Scheme) error {
	return nil
}
