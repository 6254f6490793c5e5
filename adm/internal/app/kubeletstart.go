package app

import (
	"os"
	"time"

	"trireme.dev/adm/internal/kubelet"
	"trireme.dev/adm/internal/options"
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
	pid, err := supervisor.Start(self, supervisor.Spec{Name: "kubelet", PIDFile: pidFile, LogFile: cfg.Paths.LogFile("kubelet"),
		Command: append(kubelet.Command(binary, cfg), extraArgs...)}, 10*time.Second)
	if err != nil {
		return err
	}
	s.Printf("started the kubelet under supervisor PID %d, logs in %s", pid, cfg.Paths.LogFile("kubelet"))
	return nil
}
