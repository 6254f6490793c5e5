package app

import (
	"fmt"
	"os"
	"time"

	"trireme.dev/adm/internal/kubelet"
	"trireme.dev/adm/internal/options"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/supervisor"
	"trireme.dev/adm/internal/workflow"
)

// startKubelet writes the node's KubeletConfiguration and starts the kubelet
// under triremeadm's supervisor with extraArgs, unless one is supervised
// already: the kubelet-start phase of init and of join.
func startKubelet(cfg *options.Config, s *workflow.Status, extraArgs ...string) error {
	_, statErr := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	kc, err := kubelet.Configuration(cfg, statErr != nil)
	if err != nil {
		return err
	}
	path, err := kubelet.Write(cfg, kc)
	if err != nil {
		return err
	}
	s.Printf("wrote %s", path)
	binary, err := findBinary(kubelet.Binary)
	if err != nil {
		return err
	}
	pidFile := cfg.Paths.PIDFile("kubelet")
	if pid, ok := supervisor.Running(pidFile); ok {
		s.Printf("kubelet already supervised by PID %d", pid)
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pid, err := supervisor.Start(self, kubeletSpec(cfg.Paths, append(kubelet.Command(binary, cfg), extraArgs...)), supervisorStartTimeout)
	if err != nil {
		return err
	}
	s.Printf("started the kubelet under supervisor PID %d, logs in %s", pid, cfg.Paths.LogFile("kubelet"))
	return nil
}

// restartKubelet restarts the kubelet supervised below p with binary in place
// of the one it runs, keeping every argument it was started with (a worker's
// --bootstrap-kubeconfig, a node's --node-ip): `upgrade`'s kubelet step. The
// kubelet's SIGTERM leaves its pods running, and the new one adopts them.
func restartKubelet(p paths.Paths, binary string) (int, error) {
	pidFile := p.PIDFile("kubelet")
	command, err := supervisor.Command(pidFile)
	if err != nil {
		return 0, fmt.Errorf("the kubelet is not supervised by triremeadm (%w): restart it with %s yourself", err, binary)
	}
	command[0] = binary
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	if _, err := supervisor.Stop(pidFile, kubeletStopTimeout); err != nil {
		return 0, fmt.Errorf("stop the kubelet: %w", err)
	}
	pid, err := supervisor.Start(self, kubeletSpec(p, command), supervisorStartTimeout)
	if err != nil {
		return 0, fmt.Errorf("start the kubelet again: %w", err)
	}
	return pid, nil
}

// kubeletSpec is the kubelet supervised below p, running command.
func kubeletSpec(p paths.Paths, command []string) supervisor.Spec {
	return supervisor.Spec{Name: "kubelet", PIDFile: p.PIDFile("kubelet"), LogFile: p.LogFile("kubelet"), Command: command}
}

// supervisorStartTimeout bounds the wait for a new supervisor's PID file.
const supervisorStartTimeout = 10 * time.Second

// kubeletStopTimeout bounds the old kubelet's graceful exit.
const kubeletStopTimeout = 30 * time.Second
