package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// prSetNoNewPrivs is PR_SET_NO_NEW_PRIVS (linux/prctl.h).
const prSetNoNewPrivs = 38

// osLimits names, for Isolation, the limits limitSelf applies.
const osLimits = "rlimits on address space, CPU time, open files, file size 0, no core dumps; no new privileges"

// netnsSupported: Linux can start the child in a new network namespace.
const netnsSupported = true

// procAttr puts the child in its own process group, kills it when the
// server's thread that started it dies, and with newnet gives it a new,
// empty network namespace.
func procAttr(newnet bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if newnet {
		a.Cloneflags = syscall.CLONE_NEWNET
	}
	return a
}

// netnsRefused reports whether starting a child failed because the kernel
// refused the new network namespace (no CAP_SYS_ADMIN, a container's
// seccomp profile, a namespace limit).
func netnsRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS)
}

// killGroup kills the child's process group: the child and any helper it
// started.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

func cpuSignal(ws syscall.WaitStatus) bool { return ws.Signaled() && ws.Signal() == syscall.SIGXCPU }

// limitSelf applies the child's limits to its own process: address space
// (skipped under the race detector, whose shadow memory needs terabytes),
// CPU seconds, open files, no file writes, no core dumps, no new
// privileges.
func limitSelf(cl childLimits, addressSpace int64) error {
	// RLIMIT_CPU's soft limit sends SIGXCPU, which Go ignores unless
	// asked; the hard limit, a second later, is SIGKILL.
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		fmt.Fprintln(os.Stderr, "sandbox: CPU time limit reached")
		os.Exit(exitCPU)
	}()
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	set := []struct {
		name     string
		resource int
		cur, max uint64
	}{
		{"RLIMIT_CPU", syscall.RLIMIT_CPU, uint64(cl.CPU), uint64(cl.CPU) + 1},
		{"RLIMIT_NOFILE", syscall.RLIMIT_NOFILE, maxFiles, maxFiles},
		{"RLIMIT_FSIZE", syscall.RLIMIT_FSIZE, 0, 0},
		{"RLIMIT_CORE", syscall.RLIMIT_CORE, 0, 0},
	}
	if !raceEnabled {
		set = append(set, struct {
			name     string
			resource int
			cur, max uint64
		}{"RLIMIT_AS", syscall.RLIMIT_AS, uint64(addressSpace), uint64(addressSpace)})
	}
	for _, s := range set {
		if err := syscall.Setrlimit(s.resource, &syscall.Rlimit{Cur: s.cur, Max: s.max}); err != nil {
			return fmt.Errorf("sandbox: setrlimit %s: %w", s.name, err)
		}
	}
	return nil
}
