package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// prSetNoNewPrivs is PR_SET_NO_NEW_PRIVS (linux/prctl.h).
const prSetNoNewPrivs = 38

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
