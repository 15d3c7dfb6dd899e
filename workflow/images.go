package workflow

import (
	"context"

	"github.com/agentcraftlab/agentcraft/tool/imagegen"
)

// ImageGenerator draws pictures for image nodes and keeps them as uploads
// of the run's workspace; package tool/imagegen's Generator implements
// it. With Services.Images nil, image nodes fail saying which setting
// turns it on.
type ImageGenerator interface {
	Generate(ctx context.Context, workspaceID string, req imagegen.Request) (imagegen.Result, error)
}
