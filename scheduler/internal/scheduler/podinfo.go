package scheduler

import (
	v1 "k8s.io/api/core/v1"

	"trireme.dev/scheduler/internal/framework"
)

func podInfo(pod *v1.Pod) *framework.PodInfo { return framework.NewPodInfo(pod) }
