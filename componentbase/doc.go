// Package componentbase holds the plumbing every Trireme component shares and
// that is not API, written once so that no component grows its own copy:
//
//   - command: the one entry shape of every binary (cobra, --version,
//     --config read under the flags, injected args and output streams),
//     for a component's options or a tree of subcommands, which completes
//     and validates the options, sets up logging and idle trimming before
//     the component runs;
//   - configfile: the --config file read strictly into the kind wanted,
//     then defaulted and validated;
//   - serving: the HTTPS endpoint with delegated authentication and
//     authorization, /healthz /livez /readyz, /metrics and pprof;
//   - clientconn: the client configuration from upstream's clientConnection
//     settings (kubeconfig or in-cluster, QPS, burst, content types);
//   - leaderelection: one identity format, upstream's --leader-elect-*
//     flags, work run only while the Lease is held;
//   - logging: zap under logr, klog routed to it, and the --log-format
//     and -v settings every component embeds;
//   - processmetrics: a component's own Prometheus registry, started with
//     the Go runtime's and the process's collectors;
//   - memtrim: idle memory trimming;
//   - cgroupfs: the removal of pods' cgroups;
//   - nftbatch: nftables transactions written as one nfnetlink batch (or
//     through the nft binary), for the proxy and trireme-netpol;
//   - freeport: free loopback ports for tests;
//   - testpki: CAs, certificates and certificate requests for tests;
//   - testcluster: the control plane tests run against, one interface with
//     an in-process depth (the apiserver's testserver) and a process depth
//     (the built binaries) so one test body runs at both.
//
// Components import its packages and the api module, never each other.
package componentbase
