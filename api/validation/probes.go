package validation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// probe checks a liveness, readiness or startup probe. Liveness and startup
// probes decide on the first success, so their successThreshold must be 1.
func probe(pr *corev1.Probe, fldPath *field.Path, singleSuccess bool) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := probeHandler(&pr.ProbeHandler, fldPath)
	errs = append(errs, nonNegative(int64(pr.InitialDelaySeconds), fldPath.Child("initialDelaySeconds"))...)
	errs = append(errs, nonNegative(int64(pr.TimeoutSeconds), fldPath.Child("timeoutSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.PeriodSeconds), fldPath.Child("periodSeconds"))...)
	errs = append(errs, nonNegative(int64(pr.SuccessThreshold), fldPath.Child("successThreshold"))...)
	errs = append(errs, nonNegative(int64(pr.FailureThreshold), fldPath.Child("failureThreshold"))...)
	if singleSuccess && pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(fldPath.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	if pr.TerminationGracePeriodSeconds != nil {
		if !singleSuccess {
			errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *pr.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		} else if *pr.TerminationGracePeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *pr.TerminationGracePeriodSeconds, "must be greater than 0"))
		}
	}
	return errs
}

// oneHandler collects the actions a probe or hook sets and checks that
// exactly one is: the second and later are forbidden, none is required.
type oneHandler struct {
	path *field.Path
	n    int
	errs field.ErrorList
}

// add records the action name when set, validating it with check if it is
// the first.
func (o *oneHandler) add(name string, set bool, check func(*field.Path) field.ErrorList) {
	if !set {
		return
	}
	o.n++
	if o.n > 1 {
		o.errs = append(o.errs, field.Forbidden(o.path.Child(name), "may not specify more than 1 handler type"))
		return
	}
	o.errs = append(o.errs, check(o.path.Child(name))...)
}

func (o *oneHandler) result() field.ErrorList {
	if o.n == 0 {
		o.errs = append(o.errs, field.Required(o.path, "must specify a handler type"))
	}
	return o.errs
}

// probeHandler requires exactly one of the probe actions.
func probeHandler(h *corev1.ProbeHandler, fldPath *field.Path) field.ErrorList {
	o := &oneHandler{path: fldPath}
	o.add("exec", h.Exec != nil, func(p *field.Path) field.ErrorList { return execAction(h.Exec, p) })
	o.add("httpGet", h.HTTPGet != nil, func(p *field.Path) field.ErrorList { return httpGetAction(h.HTTPGet, p) })
	o.add("tcpSocket", h.TCPSocket != nil, func(p *field.Path) field.ErrorList { return portNumOrName(h.TCPSocket.Port, p.Child("port")) })
	o.add("grpc", h.GRPC != nil, func(p *field.Path) field.ErrorList { return portNum(h.GRPC.Port, p.Child("port")) })
	return o.result()
}

// lifecycleHandler is probeHandler for postStart/preStop hooks, which may
// also sleep and may not use gRPC.
func lifecycleHandler(h *corev1.LifecycleHandler, fldPath *field.Path) field.ErrorList {
	o := &oneHandler{path: fldPath}
	o.add("exec", h.Exec != nil, func(p *field.Path) field.ErrorList { return execAction(h.Exec, p) })
	o.add("httpGet", h.HTTPGet != nil, func(p *field.Path) field.ErrorList { return httpGetAction(h.HTTPGet, p) })
	o.add("tcpSocket", h.TCPSocket != nil, func(p *field.Path) field.ErrorList { return portNumOrName(h.TCPSocket.Port, p.Child("port")) })
	o.add("sleep", h.Sleep != nil, func(p *field.Path) field.ErrorList { return nonNegative(h.Sleep.Seconds, p.Child("seconds")) })
	return o.result()
}

func lifecycle(lc *corev1.Lifecycle, fldPath *field.Path) field.ErrorList {
	if lc == nil {
		return nil
	}
	var errs field.ErrorList
	if lc.PostStart != nil {
		errs = append(errs, lifecycleHandler(lc.PostStart, fldPath.Child("postStart"))...)
	}
	if lc.PreStop != nil {
		errs = append(errs, lifecycleHandler(lc.PreStop, fldPath.Child("preStop"))...)
	}
	if lc.StopSignal != nil {
		errs = append(errs, enum(*lc.StopSignal, fldPath.Child("stopSignal"), stopSignals...)...)
	}
	return errs
}

// stopSignals are the signals upstream accepts for lifecycle.stopSignal.
var stopSignals = []corev1.Signal{
	corev1.SIGABRT, corev1.SIGALRM, corev1.SIGBUS, corev1.SIGCHLD, corev1.SIGCLD, corev1.SIGCONT, corev1.SIGFPE, corev1.SIGHUP, corev1.SIGILL, corev1.SIGINT, corev1.SIGIO, corev1.SIGIOT, corev1.SIGKILL, corev1.SIGPIPE, corev1.SIGPOLL, corev1.SIGPROF, corev1.SIGPWR, corev1.SIGQUIT, corev1.SIGSEGV, corev1.SIGSTKFLT, corev1.SIGSTOP, corev1.SIGSYS, corev1.SIGTERM, corev1.SIGTRAP, corev1.SIGTSTP, corev1.SIGTTIN, corev1.SIGTTOU, corev1.SIGURG, corev1.SIGUSR1, corev1.SIGUSR2, corev1.SIGVTALRM, corev1.SIGWINCH, corev1.SIGXCPU, corev1.SIGXFSZ, corev1.SIGRTMIN, corev1.SIGRTMINPLUS1, corev1.SIGRTMINPLUS2, corev1.SIGRTMINPLUS3, corev1.SIGRTMINPLUS4, corev1.SIGRTMINPLUS5, corev1.SIGRTMINPLUS6, corev1.SIGRTMINPLUS7, corev1.SIGRTMINPLUS8, corev1.SIGRTMINPLUS9, corev1.SIGRTMINPLUS10, corev1.SIGRTMINPLUS11, corev1.SIGRTMINPLUS12, corev1.SIGRTMINPLUS13, corev1.SIGRTMINPLUS14, corev1.SIGRTMINPLUS15, corev1.SIGRTMAXMINUS14, corev1.SIGRTMAXMINUS13, corev1.SIGRTMAXMINUS12, corev1.SIGRTMAXMINUS11, corev1.SIGRTMAXMINUS10, corev1.SIGRTMAXMINUS9, corev1.SIGRTMAXMINUS8, corev1.SIGRTMAXMINUS7, corev1.SIGRTMAXMINUS6, corev1.SIGRTMAXMINUS5, corev1.SIGRTMAXMINUS4, corev1.SIGRTMAXMINUS3, corev1.SIGRTMAXMINUS2, corev1.SIGRTMAXMINUS1, corev1.SIGRTMAX,
}

func execAction(e *corev1.ExecAction, fldPath *field.Path) field.ErrorList {
	if len(e.Command) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("command"), "")}
	}
	return nil
}

var supportedURISchemes = []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}

func httpGetAction(h *corev1.HTTPGetAction, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(fldPath.Child("path"), ""))
	}
	errs = append(errs, portNumOrName(h.Port, fldPath.Child("port"))...)
	errs = append(errs, optionalEnum(h.Scheme, fldPath.Child("scheme"), supportedURISchemes...)...)
	for i, hdr := range h.HTTPHeaders {
		errs = append(errs, each(fldPath.Child("httpHeaders").Index(i).Child("name"), hdr.Name, validation.IsHTTPHeaderName(hdr.Name))...)
	}
	return errs
}
