//go:build !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// Outside Linux the child is still a separate process killed at its
// deadline, with the heap and resident-memory watches, but without
// rlimits, namespaces or no_new_privs: production runs on Linux.

const osLimits = "no rlimits on this system"

const netnsSupported = false

func procAttr(bool) *syscall.SysProcAttr { return nil }

func netnsRefused(error) bool { return false }

// killGroup kills the child; helpers it started are not tracked here.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func cpuSignal(syscall.WaitStatus) bool { return false }

func limitSelf(childLimits, int64) error { return nil }
