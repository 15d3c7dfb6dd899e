package jsrun

import (
	"context"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// memoryOverhead is what the child holds besides the script's heap
// growth: the goja runtime and the globals parsed into it, per byte of
// their JSON.
const (
	memoryOverhead     = 16 << 20
	memoryPerInputByte = 8
)

// startGrace is how long after the time limit the parent kills the child.
const startGrace = scriptrun.StartGrace

// job is the sandbox kind that runs scripts; runLocal is its child side,
// which runs the script in-process under goja's own limits, inside the
// sandbox's.
var job = scriptrun.NewJob("jsrun", runLocal)

func runSandboxed(ctx context.Context, script string, gjson []byte, l Limits) (any, error) {
	return job.Run(ctx, script, gjson, l, scriptrun.Bounds{
		Timeout:        l.Timeout,
		MaxMemory:      l.MaxMemory,
		Overhead:       memoryOverhead + memoryPerInputByte*int64(len(gjson)),
		MaxOutputBytes: l.MaxOutputBytes,
	})
}
