package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// cleanupTimeout bounds deleting what the run created; it runs on a fresh
// context so an interrupted run still cleans up.
const cleanupTimeout = 5 * time.Minute

// runner holds one run's clients and identity.
type runner struct {
	cfg     Config
	connect func() (kubernetes.Interface, error) // a client on a new connection
	// connectDynamic is connect for the custom resource kind.
	connectDynamic func() (dynamic.Interface, error)
	// connectREST is connect for the custom resource's typed client.
	connectREST func() (rest.Interface, error)
	// connectProtobuf is connect speaking protobuf, for
	// protobufConfigMapKind; nil means connect.
	connectProtobuf func() (kubernetes.Interface, error)
	// base reaches the server for the phases that use clients of their own.
	base *rest.Config
	// createdCRD says the run defined the custom resource kind and so
	// removes it afterwards.
	createdCRD bool
	out        io.Writer
	run        string // value of the apiload/run label
	ns         string
	createdNS  bool
	workers    []*worker
}

// Run measures the server named by cfg's kubeconfig and prints the figures
// to out as each phase ends. It returns an error when the run could not be
// carried out or when some watcher missed an event; slow answers are
// reported, never judged.
func Run(ctx context.Context, cfg Config, out io.Writer) (err error) {
	if err := cfg.Validate(); err != nil {
		return err
	}
	base, err := restConfig(cfg)
	if err != nil {
		return err
	}
	r := newRunner(cfg, func() (kubernetes.Interface, error) { return newConnection(base) }, out)
	r.connectDynamic = func() (dynamic.Interface, error) { return newDynamicConnection(base) }
	r.connectREST = func() (rest.Interface, error) { return newRESTConnection(base) }
	r.connectProtobuf = func() (kubernetes.Interface, error) { return newConnection(protobufConfig(base)) }
	r.base = base
	kinds := slices.Clone(cfg.Kinds)
	if cfg.ListSize > 0 && !slices.Contains(kinds, "pods") {
		kinds = append(kinds, "pods")
	}
	if cfg.Watchers > 0 && !slices.Contains(kinds, "configmaps") {
		kinds = append(kinds, "configmaps")
	}
	// One DeleteCollection of ConfigMaps removes both encodings' objects.
	cleanupKinds := slices.DeleteFunc(slices.Clone(kinds), func(k string) bool {
		return k == protobufConfigMapKind && slices.Contains(kinds, "configmaps")
	})
	if err := r.connectWorkers(kinds); err != nil {
		return err
	}
	format := "JSON"
	if cfg.Protobuf {
		format = "protobuf"
	}
	fmt.Fprintf(out, "apiload: server %s, namespace %s, %d clients (one connection each), %s\n", base.Host, r.ns, cfg.Clients, format)

	if cfg.WaitReady > 0 {
		if err := waitReady(ctx, r.workers[0].cs, cfg.WaitReady); err != nil {
			return err
		}
	}
	if cfg.Idle > 0 {
		fmt.Fprintf(out, "idle for %s\n", cfg.Idle)
		select {
		case <-time.After(cfg.Idle):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.printMemory("idle")

	if err := r.setupNamespace(ctx); err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		err = errors.Join(err, r.cleanup(cctx, cleanupKinds))
	}()
	if crKind := slices.IndexFunc(kinds, isCustomResourceKind); crKind >= 0 {
		crds, err := apiextensionsclient.NewForConfig(base)
		if err != nil {
			return err
		}
		if r.createdCRD, err = ensureCRD(ctx, crds, loadCRD(r.run)); err != nil {
			return err
		}
		// The new resource answers a moment after it is Established.
		kc := r.workers[0].kinds[kinds[crKind]]
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := kc.list(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, nil
		}); err != nil {
			return fmt.Errorf("%s not served: %w", loadGVR, err)
		}
		if err := waitCreatable(ctx, crds, loadCRD(r.run).Name); err != nil {
			return err
		}
	}
	if cfg.RBACObjects > 0 {
		if err := r.seedRBAC(ctx, cfg.RBACObjects); err != nil {
			return err
		}
	}
	return r.measure(ctx)
}

// newRunner names the run and its namespace; connect opens each client.
func newRunner(cfg Config, connect func() (kubernetes.Interface, error), out io.Writer) *runner {
	r := &runner{cfg: cfg, connect: connect, out: out, run: fmt.Sprintf("%06x", rand.IntN(1<<24))}
	if r.ns = cfg.Namespace; r.ns == "" {
		r.ns = "apiload-" + r.run
	}
	return r
}

// connectWorkers opens one connection per client, with a client for each
// kind the run touches.
func (r *runner) connectWorkers(kinds []string) error {
	for i := range r.cfg.Clients {
		cs, err := r.connect()
		if err != nil {
			return err
		}
		w := &worker{id: i, cs: cs, kinds: map[string]kindClient{}, objs: map[string][]metav1.Object{}}
		for _, k := range kinds {
			if isCustomResourceKind(k) {
				dyn, err := r.connectDynamic()
				if err != nil {
					return err
				}
				dk := dynamicKind{api: dyn.Resource(loadGVR).Namespace(r.ns)}
				w.kinds[k] = dk
				if k == customResourceKind && r.connectREST != nil {
					c, err := r.connectREST()
					if err != nil {
						return err
					}
					w.kinds[k] = typedCRKind{dynamicKind: dk, c: c, ns: r.ns}
				}
				continue
			}
			if k == protobufConfigMapKind && r.connectProtobuf != nil {
				pb, err := r.connectProtobuf()
				if err != nil {
					return err
				}
				if w.kinds[k], err = newKindClient(pb, k, r.ns); err != nil {
					return err
				}
				continue
			}
			if w.kinds[k], err = newKindClient(cs, k, r.ns); err != nil {
				return err
			}
		}
		r.workers = append(r.workers, w)
	}
	return nil
}

// measure runs the phases in order, printing each as it ends.
func (r *runner) measure(ctx context.Context) error {
	if len(r.cfg.Verbs) > 0 && len(r.cfg.Kinds) > 0 {
		r.printVerbHeader()
		for i, kind := range r.cfg.Kinds {
			if err := r.warmUp(ctx, kind); err != nil {
				return err
			}
			for _, verb := range Verbs {
				if !slices.Contains(r.cfg.Verbs, verb) {
					continue
				}
				sum, err := r.runVerb(ctx, verb, kind)
				if err != nil {
					return fmt.Errorf("%s %s: %w", verb, kind, err)
				}
				r.printVerb(kind, verb, sum)
			}
			if i < len(r.cfg.Kinds)-1 {
				if err := r.clearKind(ctx, kind); err != nil {
					return err
				}
			}
		}
		r.printMemory("after verbs")
	}
	if r.cfg.ListSize > 0 {
		res, err := r.runListSize(ctx)
		r.printList(res)
		if err != nil {
			return err
		}
		r.printMemory("after list")
	}
	if r.cfg.Watchers > 0 {
		res, err := r.runFanout(ctx)
		r.printFanout(res)
		if err != nil {
			return err
		}
		r.printMemory("after watchers")
		if res.Complete != res.Watchers {
			return fmt.Errorf("%d of %d watchers missed events", res.Watchers-res.Complete, res.Watchers)
		}
	}
	if r.cfg.DiscoveryCRDs > 0 {
		res, err := r.runDiscovery(ctx, r.base)
		r.printDiscovery(res)
		if err != nil {
			return err
		}
		r.printMemory(fmt.Sprintf("with %d more CRDs", res.CRDs))
	}
	return nil
}

// warmUp has every client list one object of the kind before its verbs
// are timed. A custom resource's first requests wait while the server
// builds the resource's storage and fills its watch cache (two seconds
// here), which the ConfigMaps' storage did at start-up; timed, that wait
// was a fifth of a ten-second create phase.
func (r *runner) warmUp(ctx context.Context, kind string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.workers))
	for i, w := range r.workers {
		wg.Go(func() {
			if _, err := w.kinds[kind].list(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				errs[i] = fmt.Errorf("warm up %s: %w", kind, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// clearKind deletes the objects a kind's verbs made before the next kind
// runs, so that every kind meets the server in the same state. Kept, they
// made each later kind work against a larger heap and watch cache: custom
// resources measured after two kinds of ConfigMaps got 59 % of the
// ConfigMaps' rate, and 103 % measured first.
func (r *runner) clearKind(ctx context.Context, kind string) error {
	start := time.Now()
	if err := r.workers[0].kinds[kind].deleteCollection(ctx, runLabel+"="+r.run); err != nil {
		return fmt.Errorf("delete the %s of this run: %w", kind, err)
	}
	fmt.Fprintf(r.out, "  (deleted the %s objects before the next kind, in %s)\n", kind, time.Since(start).Round(time.Millisecond))
	return nil
}

// setupNamespace creates the run's namespace unless it exists already, in
// which case the run leaves it in place afterwards.
func (r *runner) setupNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns, Labels: map[string]string{runLabel: r.run}}}
	_, err := r.workers[0].cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	switch {
	case err == nil:
		r.createdNS = true
	case apierrors.IsAlreadyExists(err) && r.cfg.Namespace != "":
	default:
		return fmt.Errorf("create namespace %s: %w", r.ns, err)
	}
	// Pods need their namespace's default ServiceAccount. A cluster's
	// controller-manager makes it; a bare apiserver has none, so the driver
	// makes it when missing and measures either the same way.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := r.workers[0].cs.CoreV1().ServiceAccounts(r.ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create default service account in %s: %w", r.ns, err)
	}
	return nil
}

// cleanup deletes every object of the run, then the namespace if the run
// made it. Finishing a namespace's deletion is left to the server's
// namespace controller.
func (r *runner) cleanup(ctx context.Context, kinds []string) error {
	var errs []error
	selector := runLabel + "=" + r.run
	start := time.Now()
	for _, k := range kinds {
		if err := r.workers[0].kinds[k].deleteCollection(ctx, selector); err != nil {
			errs = append(errs, fmt.Errorf("delete %s of this run: %w", k, err))
		}
	}
	if r.base != nil && (r.createdCRD || r.cfg.DiscoveryCRDs > 0) {
		crds, err := apiextensionsclient.NewForConfig(r.base)
		if err == nil {
			err = crds.ApiextensionsV1().CustomResourceDefinitions().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("delete CRDs of this run: %w", err))
		}
	}
	if r.createdNS {
		err := r.workers[0].cs.CoreV1().Namespaces().Delete(ctx, r.ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete namespace %s: %w", r.ns, err))
		}
	}
	fmt.Fprintf(r.out, "cleanup: deleted this run's %v in %s\n", kinds, time.Since(start).Round(time.Millisecond))
	return errors.Join(errs...)
}
