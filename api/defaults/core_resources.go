package defaults

import (
	corev1 "k8s.io/api/core/v1"
)

// milliScale is the precision quantities are kept at: upstream rounds every
// ResourceList up to it while defaulting, for compatibility with clients that
// cannot represent finer values.
const milliScale = -3

// roundResourceList rounds each quantity of *l up to milli precision.
func roundResourceList(l *corev1.ResourceList) {
	for name, q := range *l {
		q.RoundUp(milliScale)
		(*l)[name] = q
	}
}

// roundRequirements rounds the limits and requests of r.
func roundRequirements(r *corev1.ResourceRequirements) {
	roundResourceList(&r.Limits)
	roundResourceList(&r.Requests)
}
