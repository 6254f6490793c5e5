// Package app is trireme-kubelet's command line: flags and the --config
// KubeletConfiguration into options, then the kubelet's parts wired
// together and run until a signal.
package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/version"
	cri "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/logging"
	"trireme.dev/kubelet/internal/certificates"
	"trireme.dev/kubelet/internal/crilist"
	"trireme.dev/kubelet/internal/eviction"
	"trireme.dev/kubelet/internal/imagevolume"
	"trireme.dev/kubelet/internal/kubelet"
	"trireme.dev/kubelet/internal/nodestatus"
	"trireme.dev/kubelet/internal/options"
	"trireme.dev/kubelet/internal/podcertificate"
	"trireme.dev/kubelet/internal/podcgroup"
	"trireme.dev/kubelet/internal/prober"
	"trireme.dev/kubelet/internal/staticpod"
	"trireme.dev/kubelet/internal/system"
	"trireme.dev/kubelet/internal/volume"
)

// spec is the command line: upstream's flags over the --config
// KubeletConfiguration, which Options.Complete applies itself (only the
// flags set on the command line win over the file).
var spec = command.Spec[*options.Options]{
	Name:       "trireme-kubelet",
	Short:      "Register the node and run the pods bound to it through the CRI",
	NewOptions: options.New,
	AddFlags:   (*options.Options).AddFlags,
	Complete:   (*options.Options).Complete,
	Logging:    func(o *options.Options) logging.Settings { return o.Settings },
	Run:        run,
}

// Run parses args and runs the kubelet until ctx ends.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

// run wires the kubelet's parts together and runs them until ctx ends.
func run(ctx context.Context, o *options.Options) error {
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Running the node's pods", "node", o.HostnameOverride)
	machine, err := prepareHost(o.Config, log)
	if err != nil {
		return err
	}
	rt, err := connectRuntime(ctx, o.Config, log)
	if err != nil {
		return err
	}
	defer rt.lister.Close()
	defer rt.views.Close()
	api, err := connectAPI(ctx, o, log)
	if err != nil {
		return err
	}
	defer api.broadcaster.Shutdown()
	nodeIPs, err := nodeIPs(o.NodeIP)
	if err != nil {
		return err
	}

	nodeName := o.HostnameOverride
	factory := informers.NewSharedInformerFactoryWithOptions(api.client, 0)
	podFactory := informers.NewSharedInformerFactoryWithOptions(api.client, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	}))
	services := factory.Core().V1().Services()
	// The node status manager needs the eviction manager, which needs the
	// kubelet: the kubelet reads the node's allocatable through nodes,
	// set below before any pod is synced (the pod sources start later).
	var nodes *nodestatus.Manager
	allocatable := func() corev1.ResourceList {
		if nodes == nil {
			return nil
		}
		return nodes.NodeAllocatable()
	}
	k, certs := newKubelet(o, rt, api, nodeIPs, factory, allocatable, log)
	go certs.Run(ctx)
	podInformer := podFactory.Core().V1().Pods().Informer()
	if err := feedPods(ctx, podInformer, k); err != nil {
		return err
	}

	evictions, imageGC, err := newEviction(o, k, rt, log)
	if err != nil {
		return err
	}
	go evictions.Run(ctx, evictionMonitoringPeriod)
	go runImageGC(ctx, imageGC, log)
	nodes = newNodeStatus(o, api.client, rt, machine, nodeIPs, evictions, log)

	var static *staticpod.Source
	if cfg := o.Config; cfg.StaticPodPath != "" {
		static = staticpod.New(cfg.StaticPodPath, nodeName, api.client, k, cfg.FileCheckFrequency.Duration, log.WithName("static"))
		static.UseLister(podFactory.Core().V1().Pods().Lister())
		go static.Run(ctx)
	}
	if *o.Config.EnableServer {
		if err := startServer(ctx, o, api.client, k, rt.runtime, nodeIPs, nodes.Addresses, log.WithName("server")); err != nil {
			return err
		}
	}
	if port := *o.Config.HealthzPort; port > 0 {
		startHealthz(ctx, net.JoinHostPort(o.Config.HealthzBindAddress, strconv.Itoa(int(port))), log)
	}

	go func() {
		if err := nodes.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Node status manager stopped")
		}
	}()
	factory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced, services.Informer().HasSynced) {
			return
		}
		if static != nil && !static.WaitSynced(ctx) {
			return
		}
		k.SetSourcesReady()
		log.Info("Pod sources synced")
	}()
	k.Run(logr.NewContext(ctx, log))
	log.Info("Stopping trireme-kubelet")
	factory.Shutdown()
	podFactory.Shutdown()
	return nil
}

// prepareHost checks the cgroup version against failCgroupV1, lowers the
// kubelet's OOM score, raises its open files limit and reads the machine.
func prepareHost(cfg *kubeletv1beta1.KubeletConfiguration, log logr.Logger) (system.MachineInfo, error) {
	cgroups := system.DetectCgroupVersion()
	if cgroups == 1 && *cfg.FailCgroupV1 {
		return system.MachineInfo{}, fmt.Errorf("this host uses cgroup v1 and failCgroupV1 is true: set failCgroupV1: false (or --fail-cgroupv1=false) to run on it")
	}
	log.Info("Detected cgroups", "version", int(cgroups), "driver", cfg.CgroupDriver)
	if err := system.SetOOMScoreAdj(int(*cfg.OOMScoreAdj)); err != nil {
		log.Info("Could not lower the kubelet's OOM score; continuing", "oomScoreAdj", *cfg.OOMScoreAdj, "err", err.Error())
	}
	if err := system.RaiseOpenFilesLimit(uint64(cfg.MaxOpenFiles)); err != nil {
		log.Info("Could not raise the open files limit; continuing", "maxOpenFiles", cfg.MaxOpenFiles, "err", err.Error())
	}
	return system.ReadMachineInfo()
}

// runtimeClients are the container runtime's services, as the kubelet
// talks to them.
type runtimeClients struct {
	runtime cri.RuntimeService
	images  cri.ImageManagerService
	lister  *crilist.Lister
	// views mounts image volumes through containerd's own API on the
	// image service's socket.
	views *imagevolume.Client
	// name is the runtime's name; cgroupDriver the cgroup driver it uses.
	name, cgroupDriver string
}

// connectRuntime connects to the CRI runtime and image services.
func connectRuntime(ctx context.Context, cfg *kubeletv1beta1.KubeletConfiguration, log logr.Logger) (*runtimeClients, error) {
	// A nil tracer provider leaves out the OpenTelemetry stats handler:
	// the kubelet exports no traces, and the handler's work on every CRI
	// call (relist makes one a second) was a tenth of an idle kubelet's CPU.
	rs, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(cfg.ContainerRuntimeEndpoint).
		WithConnectionTimeout(cfg.RuntimeRequestTimeout.Duration).
		WithTracerProvider(nil).
		Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to the container runtime: %w", err)
	}
	imageEndpoint := cfg.ImageServiceEndpoint
	if imageEndpoint == "" {
		imageEndpoint = cfg.ContainerRuntimeEndpoint
	}
	is, err := remote.NewRemoteImageServiceBuilder().
		WithEndpoint(imageEndpoint).
		WithConnectionTimeout(cfg.RuntimeRequestTimeout.Duration).
		WithTracerProvider(nil).
		Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to the image service: %w", err)
	}
	v, err := rs.Version(ctx, "v1")
	if err != nil {
		return nil, fmt.Errorf("container runtime version: %w", err)
	}
	log.Info("Connected to the container runtime", "runtime", v.RuntimeName, "version", v.RuntimeVersion, "criVersion", v.RuntimeApiVersion)
	lister, err := crilist.Dial(cfg.ContainerRuntimeEndpoint)
	if err != nil {
		return nil, err
	}
	views, err := imagevolume.Dial(strings.TrimPrefix(imageEndpoint, "unix://"))
	if err != nil {
		lister.Close()
		return nil, err
	}
	return &runtimeClients{runtime: rs, images: is, lister: lister, views: views, name: v.RuntimeName,
		cgroupDriver: runtimeCgroupDriver(ctx, rs, cfg.CgroupDriver, log)}, nil
}

// apiClients are the kubelet's clients of the API server.
type apiClients struct {
	client      kubernetes.Interface
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
}

// connectAPI bootstraps the kubelet's client certificate if asked, starts
// its rotation and builds the API clients. Events have their own client
// and rate limit (eventRecordQPS, eventBurst), as upstream's, so that a
// burst of pod starts does not queue status updates behind its events.
func connectAPI(ctx context.Context, o *options.Options, log logr.Logger) (*apiClients, error) {
	cfg := o.Config
	if o.BootstrapKubeconfig != "" {
		if err := certificates.Bootstrap(ctx, o.Kubeconfig, o.BootstrapKubeconfig, o.CertDir, o.HostnameOverride, bootstrapTimeout, log.WithName("certificates")); err != nil {
			return nil, fmt.Errorf("TLS bootstrap: %w", err)
		}
	}
	if cfg.RotateCertificates {
		if err := startClientRotation(o, log.WithName("certificates")); err != nil {
			return nil, err
		}
	}
	restConfig, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	restConfig.QPS = float32(*cfg.KubeAPIQPS)
	restConfig.Burst = int(cfg.KubeAPIBurst)
	restConfig.ContentType = cfg.ContentType
	restConfig.UserAgent = "trireme-kubelet/" + version.Get().GitVersion
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	eventConfig := rest.CopyConfig(restConfig)
	eventConfig.QPS = float32(*cfg.EventRecordQPS)
	eventConfig.Burst = int(cfg.EventBurst)
	if *cfg.EventRecordQPS == 0 {
		eventConfig.QPS = -1
	}
	eventClient, err := kubernetes.NewForConfig(eventConfig)
	if err != nil {
		return nil, fmt.Errorf("event client: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: o.HostnameOverride})
	return &apiClients{client: client, broadcaster: broadcaster, recorder: recorder}, nil
}

// newKubelet makes the pod manager, with its prober and volumes, and the
// issuer of pod certificates the volumes take, to run; factory gives the
// Services and ClusterTrustBundles it reads.
func newKubelet(o *options.Options, rt *runtimeClients, api *apiClients, nodeIPs []net.IP, factory informers.SharedInformerFactory, allocatable func() corev1.ResourceList, log logr.Logger) (*kubelet.Kubelet, *podcertificate.Manager) {
	cfg := o.Config
	probes := prober.New(rt.runtime, log.WithName("prober"), nil)
	vols := volume.New(o.RootDir, api.client, nil)
	bundles := factory.Certificates().V1().ClusterTrustBundles()
	vols.SetImageViews(rt.views)
	vols.SetTrustBundles(trustBundleCache{bundles.Lister(), bundles.Informer().HasSynced})
	services := factory.Core().V1().Services()
	k := kubelet.New(kubelet.Config{
		NodeName:      o.HostnameOverride,
		NodeIPs:       nodeIPs,
		Client:        api.client,
		Runtime:       rt.runtime,
		Lister:        rt.lister,
		Images:        rt.images,
		RuntimeName:   rt.name,
		PodLogsDir:    cfg.PodLogsDir,
		ClusterDNS:    cfg.ClusterDNS,
		ClusterDomain: cfg.ClusterDomain,
		ResolvConf:    *cfg.ResolverConfig,
		Services:      services.Lister(),
		Volumes:       vols,
		Prober:        probes,
		Recorder:      api.recorder,
		ResyncPeriod:  cfg.SyncFrequency.Duration,
		CgroupDriver:  rt.cgroupDriver,
		// Pods go under <cgroupRoot>/kubepods, as upstream lays them out, so
		// kubelets sharing a host (nodes in network namespaces) keep their
		// pods apart.
		CgroupParent:  path.Join(cfg.CgroupRoot, "kubepods"),
		RemoveCgroups: system.RemoveCgroups,
		PodCgroups:    podcgroup.Writer{Root: "/sys/fs/cgroup", Unified: system.DetectCgroupVersion() == 2},
		Allocatable:   allocatable,
	}, log.WithName("pods"))
	probes.SetOnChange(k.Wake)
	vols.SetFields(k)
	certs := podcertificate.New(podcertificate.Config{Client: api.client, NodeName: o.HostnameOverride, Recorder: api.recorder, Wake: k.Wake})
	vols.SetPodCertificates(certs)
	return k, certs
}

// trustBundleCache is the ClusterTrustBundle informer's cache, as the
// volume manager reads it.
type trustBundleCache struct {
	certlisters.ClusterTrustBundleLister
	synced cache.InformerSynced
}

func (c trustBundleCache) HasSynced() bool { return c.synced() }

// feedPods hands the node's pods from the API server, mirror pods aside,
// to the kubelet; a mirror pod's status goes to its static pod's worker,
// which writes its own again where the mirror's differs.
func feedPods(ctx context.Context, informer cache.SharedIndexInformer, k *kubelet.Kubelet) error {
	upsert := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		switch {
		case !ok:
		case staticpod.IsMirror(pod):
			// The mirror's annotation is its static pod's hash, its UID.
			k.MirrorSeen(types.UID(pod.Annotations[staticpod.AnnotationMirror]), &pod.Status)
		default:
			k.UpsertPod(ctx, pod)
		}
	}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    upsert,
		UpdateFunc: func(_, obj any) { upsert(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok && !staticpod.IsMirror(pod) {
				k.RemovePod(pod.UID)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	return nil
}

// newNodeStatus makes the manager of the Node object: registration,
// status, lease.
func newNodeStatus(o *options.Options, client kubernetes.Interface, rt *runtimeClients, machine system.MachineInfo, nodeIPs []net.IP, evictions *eviction.Manager, log logr.Logger) *nodestatus.Manager {
	cfg := o.Config
	return nodestatus.New(nodestatus.Config{
		NodeName:        o.HostnameOverride,
		NodeIPs:         nodeIPs,
		Labels:          o.NodeLabels,
		Taints:          cfg.RegisterWithTaints,
		MaxPods:         cfg.MaxPods,
		KubeReserved:    cfg.KubeReserved,
		SystemReserved:  cfg.SystemReserved,
		EvictionHard:    cfg.EvictionHard,
		Port:            cfg.Port,
		RootDir:         o.RootDir,
		UpdateFrequency: cfg.NodeStatusUpdateFrequency.Duration,
		ReportFrequency: cfg.NodeStatusReportFrequency.Duration,
		LeaseDuration:   time.Duration(cfg.NodeLeaseDurationSeconds) * time.Second,
		MaxImages:       int(*cfg.NodeStatusMaxImages),
		ProviderID:      cfg.ProviderID,
		Pressure:        evictions.Pressure,
		// As upstream: the annotation only when --node-ip was given.
		ExternalCloudProvider: o.CloudProvider == options.CloudProviderExternal,
		ProvidedNodeIPs:       providedNodeIPs(o.NodeIP, nodeIPs),
	}, client, rt.runtime, rt.images, machine, log.WithName("node"))
}

// providedNodeIPs are the node IPs when --node-ip gave them.
func providedNodeIPs(flag string, ips []net.IP) []net.IP {
	if flag == "" {
		return nil
	}
	return ips
}

func nodeIPs(flag string) ([]net.IP, error) {
	if flag != "" {
		ip := net.ParseIP(flag)
		if ip == nil {
			return nil, fmt.Errorf("--node-ip %q is not an IP address", flag)
		}
		return []net.IP{ip}, nil
	}
	ip, err := system.DefaultNodeIP()
	if err != nil {
		return nil, err
	}
	return []net.IP{ip}, nil
}

func startHealthz(ctx context.Context, addr string, log logr.Logger) {
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			log.Error(err, "Healthz server stopped", "address", addr)
		}
	}()
	go func() { <-ctx.Done(); _ = srv.Close() }()
}

// runtimeCgroupDriver asks the runtime which cgroup driver it uses (CRI
// RuntimeConfig), as upstream's kubelet does; runtimes older than that
// RPC (containerd 1.6) answer Unimplemented and the configured driver
// stands.
func runtimeCgroupDriver(ctx context.Context, rs cri.RuntimeService, configured string, log logr.Logger) string {
	rc, err := rs.RuntimeConfig(ctx)
	if err != nil {
		if status.Code(err) == codes.Unimplemented {
			log.Info("The runtime does not report its cgroup driver; using the configured one", "cgroupDriver", configured)
		} else {
			log.Error(err, "Ask the runtime for its cgroup driver failed; using the configured one", "cgroupDriver", configured)
		}
		return configured
	}
	switch rc.GetLinux().GetCgroupDriver() {
	case runtimeapi.CgroupDriver_SYSTEMD:
		return "systemd"
	case runtimeapi.CgroupDriver_CGROUPFS:
		return "cgroupfs"
	}
	return configured
}

// bootstrapTimeout bounds the wait for the bootstrap CSR's certificate.
const bootstrapTimeout = 15 * time.Minute

// startClientRotation starts renewing the client certificate when the
// kubeconfig authenticates with the certificate store's current pair (as
// TLS bootstrap writes it); credentials from elsewhere are not ours to
// replace, as upstream's kubelet only rotates what it can write back.
func startClientRotation(o *options.Options, log logr.Logger) error {
	kc, err := clientcmd.LoadFromFile(o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	current := filepath.Join(o.CertDir, certificates.ClientPairName+"-current.pem")
	ctx := kc.Contexts[kc.CurrentContext]
	if ctx == nil || kc.AuthInfos[ctx.AuthInfo] == nil || kc.AuthInfos[ctx.AuthInfo].ClientCertificate != current {
		log.Info("Not rotating the client certificate: the kubeconfig does not use the cert dir's current pair", "want", current)
		return nil
	}
	m, err := certificates.NewClientManager(o.Kubeconfig, o.CertDir, o.HostnameOverride)
	if err != nil {
		return err
	}
	m.Start()
	log.Info("Rotating the client certificate", "path", current)
	return nil
}

// evictionMonitoringPeriod is how often the eviction thresholds are
// checked (upstream's housekeeping interval); imageGCPeriod how often
// image garbage collection runs, as upstream.
const (
	evictionMonitoringPeriod = 10 * time.Second
	imageGCPeriod            = 5 * time.Minute
)

// newEviction builds the eviction manager over the host's signals and the
// CRI, and the image garbage collector it reclaims image space with.
func newEviction(o *options.Options, k *kubelet.Kubelet, rt *runtimeClients, log logr.Logger) (*eviction.Manager, *eviction.ImageGC, error) {
	cfg := o.Config
	rs, is := rt.runtime, rt.images
	thresholds, err := eviction.ParseThresholds(cfg.EvictionHard)
	if err != nil {
		return nil, nil, err
	}
	host := eviction.HostObserver{RootDir: o.RootDir, Images: is}
	gc := &eviction.ImageGC{
		Runtime: rs, Images: is,
		HighPercent: *cfg.ImageGCHighThresholdPercent, LowPercent: *cfg.ImageGCLowThresholdPercent,
		MinAge: cfg.ImageMinimumGCAge.Duration,
		ImageFs: func(ctx context.Context) (eviction.Observation, error) {
			obs, err := host.Observe(ctx)
			if err != nil {
				return eviction.Observation{}, err
			}
			return obs[eviction.ImageFsAvailable], nil
		},
		VolumeImages: rt.views.Images,
		Log:          log.WithName("imagegc"),
	}
	m := eviction.New(eviction.Config{
		Thresholds:       thresholds,
		TransitionPeriod: cfg.EvictionPressureTransitionPeriod.Duration,
		Observe:          host.Observe,
		Pods:             k.Pods,
		Usage:            eviction.CRIUsage(rs),
		Evict:            k.Evict,
		ReclaimImages:    gc.Free,
	}, log.WithName("eviction"))
	return m, gc, nil
}

func runImageGC(ctx context.Context, gc *eviction.ImageGC, log logr.Logger) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := gc.GarbageCollect(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Image garbage collection failed")
		}
	}, imageGCPeriod)
}
