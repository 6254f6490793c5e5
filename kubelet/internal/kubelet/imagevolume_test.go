package kubelet

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestPullImageVolumes: image volumes are pulled as their policies say;
// one that fails holds the pod back, and only the containers mounting it
// wait with the pull's reason, cleared once the image is there.
func TestPullImageVolumes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		source     corev1.ImageVolumeSource
		wantReason string
	}{
		{name: "present with IfNotPresent", source: corev1.ImageVolumeSource{Reference: "busybox", PullPolicy: corev1.PullIfNotPresent}},
		{name: "pulled with Always", source: corev1.ImageVolumeSource{Reference: "busybox", PullPolicy: corev1.PullAlways}},
		{name: "missing with Never", source: corev1.ImageVolumeSource{Reference: "missing:1", PullPolicy: corev1.PullNever}, wantReason: "ErrImageNeverPull"},
		{name: "empty reference", source: corev1.ImageVolumeSource{PullPolicy: corev1.PullNever}, wantReason: "InvalidImageName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			pod := testPod("imgvol")
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "other", Image: "busybox"})
			pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "img", MountPath: "/img"}}
			source := tc.source
			pod.Spec.Volumes = []corev1.Volume{{Name: "img", VolumeSource: corev1.VolumeSource{Image: &source}}}
			w := newPodWorker(pod.UID)
			ids, requeue, err := f.k.pullImageVolumes(context.Background(), w, pod, nil)
			if tc.wantReason == "" {
				if err != nil || ids["img"] == "" {
					t.Fatalf("pullImageVolumes = %v, %v", ids, err)
				}
				return
			}
			if err == nil || requeue == 0 || ids != nil {
				t.Fatalf("pullImageVolumes = %v, %v, %v; want an error and a retry", ids, requeue, err)
			}
			got := map[string]string{}
			for name, st := range w.startErr {
				got[name] = st.Reason
			}
			if diff := cmp.Diff(map[string]string{"app": tc.wantReason}, got); diff != "" {
				t.Errorf("waiting reasons (-want +got):\n%s", diff)
			}
			// The image arrives: the reason goes.
			pod.Spec.Volumes[0].Image = &corev1.ImageVolumeSource{Reference: "busybox", PullPolicy: corev1.PullIfNotPresent}
			if _, _, err := f.k.pullImageVolumes(context.Background(), w, pod, nil); err != nil {
				t.Fatal(err)
			}
			if len(w.startErr) != 0 {
				t.Errorf("waiting reasons left: %v", w.startErr)
			}
		})
	}
}

func TestImageVolumePullPolicy(t *testing.T) {
	for ref, want := range map[string]corev1.PullPolicy{
		"busybox":                      corev1.PullAlways,
		"busybox:latest":               corev1.PullAlways,
		"registry:5000/busybox":        corev1.PullAlways,
		"registry:5000/busybox:1.36":   corev1.PullIfNotPresent,
		"busybox@sha256:" + sixtyFour0: corev1.PullIfNotPresent,
	} {
		if got := imageVolumePullPolicy(&corev1.ImageVolumeSource{Reference: ref}); got != want {
			t.Errorf("%s: %s, want %s", ref, got, want)
		}
	}
	if got := imageVolumePullPolicy(&corev1.ImageVolumeSource{Reference: "busybox", PullPolicy: corev1.PullNever}); got != corev1.PullNever {
		t.Errorf("a set policy was overridden: %s", got)
	}
}

const sixtyFour0 = "0000000000000000000000000000000000000000000000000000000000000000"
