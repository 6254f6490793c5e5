package controllers

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/metrics/pkg/client/custom_metrics"
	"k8s.io/metrics/pkg/client/external_metrics"

	"trireme.dev/controller-manager/internal/controllers/bootstrapsigner"
	"trireme.dev/controller-manager/internal/controllers/csrapproving"
	"trireme.dev/controller-manager/internal/controllers/csrsigning"
	"trireme.dev/controller-manager/internal/controllers/ephemeral"
	"trireme.dev/controller-manager/internal/controllers/nodeipam"
	"trireme.dev/controller-manager/internal/controllers/nodelifecycle"
	"trireme.dev/controller-manager/internal/controllers/persistentvolume"
	"trireme.dev/controller-manager/internal/controllers/podautoscaler"
	"trireme.dev/controller-manager/internal/controllers/pvcprotection"
	"trireme.dev/controller-manager/internal/controllers/pvprotection"
	"trireme.dev/controller-manager/internal/controllers/tainteviction"
	"trireme.dev/controller-manager/internal/controllers/tokencleaner"
)

// The build functions of the node, storage, autoscaling and node-joining
// controllers; All lists them.

func buildNodeLifecycle(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	nl := cc.Config.NodeLifecycleController
	c, err := nodelifecycle.New(nodelifecycle.Options{
		Client:                    client,
		Nodes:                     cc.Informers.Core().V1().Nodes(),
		Pods:                      cc.Informers.Core().V1().Pods(),
		Leases:                    cc.Informers.Coordination().V1().Leases(),
		Recorder:                  events,
		MonitorPeriod:             nl.NodeMonitorPeriod.Duration,
		MonitorGracePeriod:        nl.NodeMonitorGracePeriod.Duration,
		StartupGracePeriod:        nl.NodeStartupGracePeriod.Duration,
		EvictionRate:              nl.NodeEvictionRate,
		SecondaryEvictionRate:     nl.SecondaryNodeEvictionRate,
		LargeClusterSizeThreshold: nl.LargeClusterSizeThreshold,
		UnhealthyZoneThreshold:    nl.UnhealthyZoneThreshold,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildTaintEviction(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	c, err := tainteviction.New(tainteviction.Options{
		Client:   client,
		Nodes:    core.Nodes(),
		Pods:     core.Pods(),
		Recorder: events,
	})
	if err != nil {
		return nil, 0, err
	}
	// Upstream runs eight eviction workers.
	return c, 8, nil
}

func buildNodeIPAM(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	kc := cc.Config.KubeCloudShared
	if !kc.AllocateNodeCIDRs {
		return nil, 0, nil
	}
	ipam := cc.Config.NodeIPAMController
	var services []string
	for _, s := range []string{ipam.ServiceCIDR, ipam.SecondaryServiceCIDR} {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				services = append(services, p)
			}
		}
	}
	c, err := nodeipam.New(nodeipam.Options{
		Client:       client,
		Nodes:        cc.Informers.Core().V1().Nodes(),
		Recorder:     events,
		ClusterCIDRs: kc.ClusterCIDR,
		MaskSize:     int(ipam.NodeCIDRMaskSize),
		MaskSizeIPv4: int(ipam.NodeCIDRMaskSizeIPv4),
		MaskSizeIPv6: int(ipam.NodeCIDRMaskSizeIPv6),
		ServiceCIDRs: services,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildCSRApproving(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	c, err := csrapproving.New(csrapproving.Options{
		Client:   client,
		CSRs:     cc.Informers.Certificates().V1().CertificateSigningRequests(),
		Nodes:    cc.Informers.Core().V1().Nodes(),
		Recorder: events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 5, nil
}

func buildCSRSigning(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	cs := cc.Config.CSRSigningController
	cas := map[string]*csrsigning.CA{}
	for signer, files := range map[string]struct{ cert, key string }{
		certificatesv1.KubeletServingSignerName:             {cs.KubeletServingSignerConfiguration.CertFile, cs.KubeletServingSignerConfiguration.KeyFile},
		certificatesv1.KubeAPIServerClientKubeletSignerName: {cs.KubeletClientSignerConfiguration.CertFile, cs.KubeletClientSignerConfiguration.KeyFile},
		certificatesv1.KubeAPIServerClientSignerName:        {cs.KubeAPIServerClientSignerConfiguration.CertFile, cs.KubeAPIServerClientSignerConfiguration.KeyFile},
		legacyUnknownSigner:                                 {cs.LegacyUnknownSignerConfiguration.CertFile, cs.LegacyUnknownSignerConfiguration.KeyFile},
	} {
		if files.cert == "" {
			files.cert, files.key = cs.ClusterSigningCertFile, cs.ClusterSigningKeyFile
		}
		if files.cert == "" {
			continue
		}
		ca, err := csrsigning.LoadCA(files.cert, files.key)
		if err != nil {
			return nil, 0, fmt.Errorf("signer %s: %w", signer, err)
		}
		cas[signer] = ca
	}
	if len(cas) == 0 {
		// As upstream: no signing files, no signer.
		return nil, 0, nil
	}
	c, err := csrsigning.New(csrsigning.Options{
		Client:   client,
		CSRs:     cc.Informers.Certificates().V1().CertificateSigningRequests(),
		Recorder: events,
		CAs:      cas,
		MaxTTL:   cs.ClusterSigningDuration.Duration,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 5, nil
}

// legacyUnknownSigner is only named in certificates/v1beta1's constants.
const legacyUnknownSigner = "kubernetes.io/legacy-unknown"

func buildPersistentVolumeBinder(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	c, err := persistentvolume.New(persistentvolume.Options{
		Client:     client,
		Claims:     core.PersistentVolumeClaims(),
		Volumes:    core.PersistentVolumes(),
		Classes:    cc.Informers.Storage().V1().StorageClasses(),
		Nodes:      core.Nodes(),
		Recorder:   events,
		SyncPeriod: cc.Config.PersistentVolumeBinderController.PVClaimBinderSyncPeriod.Duration,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildPVProtection(_ context.Context, cc *Context, client kubernetes.Interface, _ record.EventRecorder) (Runner, int, error) {
	c, err := pvprotection.New(pvprotection.Options{
		Client:  client,
		Volumes: cc.Informers.Core().V1().PersistentVolumes(),
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildPVCProtection(_ context.Context, cc *Context, client kubernetes.Interface, _ record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	c, err := pvcprotection.New(pvcprotection.Options{
		Client: client,
		Claims: core.PersistentVolumeClaims(),
		Pods:   core.Pods(),
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildEphemeralVolume(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	core := cc.Informers.Core().V1()
	c, err := ephemeral.New(ephemeral.Options{
		Client:   client,
		Pods:     core.Pods(),
		Claims:   core.PersistentVolumeClaims(),
		Recorder: events,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, int(cc.Config.EphemeralVolumeController.ConcurrentEphemeralVolumeSyncs), nil
}

func buildBootstrapSigner(_ context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	c, err := bootstrapsigner.New(bootstrapsigner.Options{
		Client:   client,
		Recorder: events,
		Resync:   cc.Config.Generic.MinResyncPeriod.Duration,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildTokenCleaner(_ context.Context, cc *Context, client kubernetes.Interface, _ record.EventRecorder) (Runner, int, error) {
	c, err := tokencleaner.New(tokencleaner.Options{
		Client: client,
		Resync: cc.Config.Generic.MinResyncPeriod.Duration,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, 1, nil
}

func buildHorizontalPodAutoscaler(ctx context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error) {
	cfg, err := cc.Clients.Config("horizontal-pod-autoscaler")
	if err != nil {
		return nil, 0, err
	}
	scales, mapper, err := scaleClient(cfg, client)
	if err != nil {
		return nil, 0, err
	}
	metrics, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return nil, 0, fmt.Errorf("metrics client: %w", err)
	}
	hpa := cc.Config.HPAController
	// Which custom.metrics.k8s.io version an adapter serves is looked up
	// again every sync period, as upstream, so one installed later is found.
	apis := custom_metrics.NewAvailableAPIsGetter(client.Discovery())
	go custom_metrics.PeriodicallyInvalidate(apis, hpa.HorizontalPodAutoscalerSyncPeriod.Duration, ctx.Done())
	external, err := external_metrics.NewForConfig(cfg)
	if err != nil {
		return nil, 0, fmt.Errorf("external metrics client: %w", err)
	}
	c, err := podautoscaler.New(podautoscaler.Options{
		Client:                client,
		Autoscalers:           cc.Informers.Autoscaling().V2().HorizontalPodAutoscalers(),
		Pods:                  cc.Informers.Core().V1().Pods(),
		Scaler:                podautoscaler.ScaleClient{Scales: scales, Mapper: mapper},
		Metrics:               podautoscaler.ResourceMetrics{Client: metrics},
		Custom:                podautoscaler.CustomMetrics{Custom: custom_metrics.NewForConfig(cfg, mapper, apis), External: external},
		Recorder:              events,
		SyncPeriod:            hpa.HorizontalPodAutoscalerSyncPeriod.Duration,
		DownscaleWindow:       hpa.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration,
		Tolerance:             hpa.HorizontalPodAutoscalerTolerance,
		CPUInitialization:     hpa.HorizontalPodAutoscalerCPUInitializationPeriod.Duration,
		InitialReadinessDelay: hpa.HorizontalPodAutoscalerInitialReadinessDelay.Duration,
	})
	if err != nil {
		return nil, 0, err
	}
	return c, int(hpa.ConcurrentHorizontalPodAutoscalerSyncs), nil
}
