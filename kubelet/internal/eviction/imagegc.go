package eviction

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	cri "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ImageGC removes images no container uses, least recently used first,
// as upstream's image garbage collector: when the image file system is
// HighPercent full it frees down to LowPercent; under imagefs pressure
// the eviction manager asks it for what the threshold needs. Pinned
// images, the runtime's sandbox image and images younger than MinAge are
// kept.
type ImageGC struct {
	Runtime     cri.RuntimeService
	Images      cri.ImageManagerService
	HighPercent int32
	LowPercent  int32
	MinAge      time.Duration
	// ImageFs observes the image file system.
	ImageFs func(ctx context.Context) (Observation, error)
	// VolumeImages returns the IDs of the images mounted as pod volumes,
	// which are in use as a container's image is; nil: none are.
	VolumeImages func(ctx context.Context) ([]string, error)
	Log          logr.Logger
	Now          func() time.Time

	mu        sync.Mutex
	firstSeen map[string]time.Time
	lastUsed  map[string]time.Time
}

func (g *ImageGC) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// detect lists the images, records when each was first seen and last
// used by a container, and returns those no container uses.
func (g *ImageGC) detect(ctx context.Context) ([]*runtimeapi.Image, error) {
	images, err := g.Images.ListImages(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	containers, err := g.Runtime.ListContainers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	sandbox, err := sandboxImage(ctx, g.Runtime)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{sandbox: sandbox != ""}
	for _, c := range containers {
		used[c.GetImageRef()] = true
		used[c.GetImage().GetImage()] = true
	}
	if g.VolumeImages != nil {
		ids, err := g.VolumeImages(ctx)
		if err != nil {
			return nil, fmt.Errorf("images of image volumes: %w", err)
		}
		for _, id := range ids {
			used[id] = true
		}
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.firstSeen == nil {
		g.firstSeen, g.lastUsed = map[string]time.Time{}, map[string]time.Time{}
	}
	present := map[string]bool{}
	var unused []*runtimeapi.Image
	for _, img := range images {
		present[img.Id] = true
		if _, ok := g.firstSeen[img.Id]; !ok {
			g.firstSeen[img.Id] = now
		}
		inUse := used[img.Id]
		for _, t := range img.RepoTags {
			inUse = inUse || used[t]
		}
		for _, d := range img.RepoDigests {
			inUse = inUse || used[d]
		}
		if inUse {
			g.lastUsed[img.Id] = now
			continue
		}
		if !img.Pinned {
			unused = append(unused, img)
		}
	}
	for id := range g.firstSeen {
		if !present[id] {
			delete(g.firstSeen, id)
			delete(g.lastUsed, id)
		}
	}
	sort.SliceStable(unused, func(i, j int) bool {
		a, b := g.lastUsed[unused[i].Id], g.lastUsed[unused[j].Id]
		if !a.Equal(b) {
			return a.Before(b)
		}
		return g.firstSeen[unused[i].Id].Before(g.firstSeen[unused[j].Id])
	})
	return unused, nil
}

// sandboxImage is the image the runtime starts pod sandboxes from, as its
// verbose status reports it (containerd's CRI config), or "" when it does
// not say. Upstream's kubelet relies on the runtime marking that image
// pinned, which containerd 1.6 does not: removed, it would leave the node
// unable to start any pod until the image is pulled again, and a cluster's
// own pause image may not be pullable at all.
func sandboxImage(ctx context.Context, rs cri.RuntimeService) (string, error) {
	st, err := rs.Status(ctx, true)
	if err != nil {
		return "", fmt.Errorf("runtime status: %w", err)
	}
	raw, ok := st.GetInfo()["config"]
	if !ok {
		return "", nil
	}
	var cfg struct {
		SandboxImage string `json:"sandboxImage"`
	}
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return "", fmt.Errorf("read the runtime's config: %w", err)
	}
	return cfg.SandboxImage, nil
}

// Free removes unused images until bytes are freed and returns what was.
func (g *ImageGC) Free(ctx context.Context, bytes int64) (int64, error) {
	unused, err := g.detect(ctx)
	if err != nil {
		return 0, err
	}
	var freed int64
	for _, img := range unused {
		if freed >= bytes {
			break
		}
		g.mu.Lock()
		young := g.now().Sub(g.firstSeen[img.Id]) < g.MinAge
		g.mu.Unlock()
		if young {
			continue
		}
		if err := g.Images.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: img.Id}); err != nil {
			return freed, fmt.Errorf("remove image %s: %w", img.Id, err)
		}
		g.Log.Info("Removed unused image", "image", img.Id, "tags", img.RepoTags, "size", img.Size)
		freed += int64(img.Size)
	}
	return freed, nil
}

// GarbageCollect frees images when the image file system is at least
// HighPercent full, down to LowPercent; otherwise it only records use.
func (g *ImageGC) GarbageCollect(ctx context.Context) error {
	fs, err := g.ImageFs(ctx)
	if err != nil {
		return err
	}
	if fs.Capacity <= 0 {
		return nil
	}
	used := fs.Capacity - fs.Available
	if used*100/fs.Capacity < int64(g.HighPercent) {
		_, err := g.detect(ctx)
		return err
	}
	need := used - fs.Capacity*int64(g.LowPercent)/100
	freed, err := g.Free(ctx, need)
	if err != nil {
		return err
	}
	if freed < need {
		return fmt.Errorf("image file system %d%% full: freed %d of the %d bytes wanted", used*100/fs.Capacity, freed, need)
	}
	return nil
}
