//go:build trireme_overlay

// This file joins upstream's package main when the image's binary is built
// (go build -tags trireme_overlay -overlay, see images/images.mk): the
// provisioner idles between PVC events, and componentbase's trimmer gives
// its executable's start-up pages and freed heap back to the node.
// Upstream's code is untouched; the build tag keeps this file out of every
// other build of this module, whose root holds no program of its own.

package main

import (
	"context"

	"k8s.io/klog/v2"

	"trireme.dev/componentbase/memtrim"
)

func init() {
	// The process ends with main; the trimmer needs no stop of its own.
	go memtrim.RunIdleTrimmer(context.Background(), klog.Background().WithName("memtrim"), memtrim.IdleInterval, memtrim.IdleAllocations)
}
