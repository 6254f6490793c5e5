package scheduler

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podStatusPatch is a strategic merge patch of one condition (merged by
// type) and the nominated node, guarded by the pod's UID so that it never
// lands on a same-named successor.
func podStatusPatch(uid types.UID, cond *v1.PodCondition, nominatedNode string) []byte {
	var nnn any = nominatedNode
	if nominatedNode == "" {
		nnn = nil
	}
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": uid},
		"status": map[string]any{
			"conditions":        []*v1.PodCondition{cond},
			"nominatedNodeName": nnn,
		},
	})
	return b
}
