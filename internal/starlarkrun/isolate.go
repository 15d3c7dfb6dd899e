package starlarkrun

import (
	"context"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// memoryOverhead is what the child holds besides the script's heap
// growth: the interpreter and the globals converted into it (a dict entry
// or a list element of a few bytes of JSON costs tens of bytes as
// Starlark values), per byte of their JSON.
const (
	memoryOverhead     = 16 << 20
	memoryPerInputByte = 16
)

// job is the sandbox kind that runs Starlark; runLocal is its child side.
var job = scriptrun.NewJob("starlarkrun", runLocal)

func runSandboxed(ctx context.Context, script string, gjson []byte, l Limits) (any, error) {
	return job.Run(ctx, script, gjson, l, scriptrun.Bounds{
		Timeout:        l.Timeout,
		MaxMemory:      l.MaxMemory,
		Overhead:       memoryOverhead + memoryPerInputByte*int64(len(gjson)),
		MaxOutputBytes: l.MaxOutputBytes,
	})
}
